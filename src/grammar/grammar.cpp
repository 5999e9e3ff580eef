#include "grammar/grammar.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "grammar/left_recursion.hpp"
#include "grammar/stack_automaton.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace kiln::grammar {
namespace {

// Sorted, merged code-point ranges (the complement when negated), surrogates removed: the code
// points that have a UTF-8 encoding.
std::vector<CodePointRange> encodable_ranges(std::vector<CodePointRange> ranges, bool negated) {
  std::sort(ranges.begin(), ranges.end(), [](auto a, auto b) { return a.first < b.first; });
  std::vector<CodePointRange> merged;
  for (const CodePointRange r : ranges) {
    if (!merged.empty() && r.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, r.last);
    } else {
      merged.push_back(r);
    }
  }
  if (negated) {
    std::vector<CodePointRange> complement;
    char32_t next = 0;
    for (const CodePointRange r : merged) {
      if (r.first > next) complement.push_back({next, r.first - 1});
      next = r.last + 1;
    }
    if (next <= kMaxCodePoint) complement.push_back({next, kMaxCodePoint});
    merged = std::move(complement);
  }
  std::vector<CodePointRange> out;
  for (CodePointRange r : merged) {
    r.last = std::min(r.last, kMaxCodePoint);
    if (r.first > r.last) continue;
    if (r.first < 0xD800 && r.last > 0xDFFF) {
      out.push_back({r.first, 0xD7FF});
      out.push_back({0xE000, r.last});
    } else if (r.last < 0xD800 || r.first > 0xDFFF) {
      out.push_back(r);
    } else if (r.first < 0xD800) {
      out.push_back({r.first, 0xD7FF});
    } else if (r.last > 0xDFFF) {
      out.push_back({0xE000, r.last});
    }
  }
  return out;
}

int utf8_length(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

std::array<std::uint8_t, 4> utf8_bytes(char32_t c) {
  switch (utf8_length(c)) {
    case 1: return {std::uint8_t(c)};
    case 2: return {std::uint8_t(0xC0 | (c >> 6)), std::uint8_t(0x80 | (c & 0x3F))};
    case 3:
      return {std::uint8_t(0xE0 | (c >> 12)), std::uint8_t(0x80 | ((c >> 6) & 0x3F)), std::uint8_t(0x80 | (c & 0x3F))};
    default:
      return {std::uint8_t(0xF0 | (c >> 18)), std::uint8_t(0x80 | ((c >> 12) & 0x3F)),
              std::uint8_t(0x80 | ((c >> 6) & 0x3F)), std::uint8_t(0x80 | (c & 0x3F))};
  }
}

using ByteRangeSequence = std::vector<std::pair<std::uint8_t, std::uint8_t>>;

// Splits [first, last] into pieces whose UTF-8 encodings are products of byte ranges (the
// classic construction: split at encoding-length boundaries, then wherever a continuation byte
// would not run over its whole range).
void utf8_sequences(char32_t first, char32_t last, std::vector<ByteRangeSequence>& out) {
  for (const char32_t boundary : {char32_t(0x7F), char32_t(0x7FF), char32_t(0xFFFF)}) {
    if (first <= boundary && boundary < last) {
      utf8_sequences(first, boundary, out);
      utf8_sequences(boundary + 1, last, out);
      return;
    }
  }
  const int n = utf8_length(first);
  for (int i = 1; i < n; ++i) {
    const char32_t mask = (char32_t(1) << (6 * i)) - 1;
    if ((first & ~mask) != (last & ~mask)) {
      if ((first & mask) != 0) {
        utf8_sequences(first, first | mask, out);
        utf8_sequences((first | mask) + 1, last, out);
        return;
      }
      if ((last & mask) != mask) {
        utf8_sequences(first, (last & ~mask) - 1, out);
        utf8_sequences(last & ~mask, last, out);
        return;
      }
    }
  }
  const auto a = utf8_bytes(first), b = utf8_bytes(last);
  ByteRangeSequence sequence;
  for (int i = 0; i < n; ++i) sequence.emplace_back(a[i], b[i]);
  out.push_back(std::move(sequence));
}

ByteSet byte_range(std::uint8_t first, std::uint8_t last) {
  ByteSet set{};
  for (int b = first; b <= last; ++b) set[b >> 6] |= std::uint64_t(1) << (b & 63);
  return set;
}

class Lowering {
 public:
  explicit Lowering(const RuleSet& rules) {
    for (const Rule& rule : rules.rules) {
      if (ids_.contains(rule.name)) fail("grammar: rule '{}' is defined twice", rule.name);
      ids_.emplace(rule.name, add_rule(rule.name));
    }
    const auto root = ids_.find(rules.root);
    if (root == ids_.end()) fail("grammar: the root rule '{}' is not defined", rules.root);
    for (std::size_t i = 0; i < rules.rules.size(); ++i) {
      const Rule& rule = rules.rules[i];
      const auto id = static_cast<std::int32_t>(i);
      if (rule.body->kind == Expr::Kind::kAlternation) {
        for (const ExprPtr& child : rule.body->children) add_alternative(id, *child);
      } else {
        add_alternative(id, *rule.body);
      }
    }
    grammar_.root = root->second;
  }

  Grammar finish() && {
    refuse_left_recursion();
    for (std::size_t rule = 0; rule < alternatives_.size(); ++rule) {
      for (const std::vector<Element>& alternative : alternatives_[rule]) {
        grammar_.starts[rule].push_back(static_cast<std::int32_t>(grammar_.elements.size()));
        grammar_.elements.insert(grammar_.elements.end(), alternative.begin(), alternative.end());
        grammar_.elements.push_back({Element::Kind::kEnd, static_cast<std::int32_t>(rule)});
      }
    }
    return std::move(grammar_);
  }

 private:
  std::int32_t add_rule(std::string name) {
    count(kRuleCost);
    grammar_.rule_names.push_back(std::move(name));
    grammar_.starts.emplace_back();
    alternatives_.emplace_back();
    return static_cast<std::int32_t>(alternatives_.size() - 1);
  }

  std::int32_t add_helper(std::int32_t owner) {
    return add_rule(fmt::format("{}#{}", grammar_.rule_names[owner], ++helpers_[owner]));
  }

  void add_alternative(std::int32_t rule, const Expr& expr) {
    std::vector<Element> elements;
    emit(rule, expr, elements);
    push_alternative(rule, std::move(elements));
  }

  // Every alternative ends in a kEnd element, counted here.
  void push_alternative(std::int32_t rule, std::vector<Element> elements) {
    count(1);
    alternatives_[rule].push_back(std::move(elements));
  }

  void count(std::size_t n) {
    size_ += n;
    if (size_ > kMaxGrammarElements) {
      fail("grammar: more than {} elements after expanding repetitions; use smaller repetition counts",
           kMaxGrammarElements);
    }
  }

  Element bytes(const ByteSet& set) {
    const auto [it, added] = set_ids_.emplace(set, static_cast<std::int32_t>(grammar_.byte_sets.size()));
    if (added) grammar_.byte_sets.push_back(set);
    return {Element::Kind::kBytes, it->second};
  }

  void emit(std::int32_t owner, const Expr& expr, std::vector<Element>& out) {
    switch (expr.kind) {
      case Expr::Kind::kLiteral:
        count(expr.text.size());
        for (const char c : expr.text) out.push_back(bytes(byte_range(std::uint8_t(c), std::uint8_t(c))));
        return;
      case Expr::Kind::kCharClass: return emit_class(owner, expr, out);
      case Expr::Kind::kRuleRef: {
        const auto it = ids_.find(expr.text);
        if (it == ids_.end()) fail("grammar: rule '{}' refers to undefined rule '{}'", root_name(owner), expr.text);
        count(1);
        out.push_back({Element::Kind::kRule, it->second});
        return;
      }
      case Expr::Kind::kSequence:
        for (const ExprPtr& child : expr.children) emit(owner, *child, out);
        return;
      case Expr::Kind::kAlternation: {
        const std::int32_t helper = add_helper(owner);
        for (const ExprPtr& child : expr.children) add_alternative(helper, *child);
        count(1);
        out.push_back({Element::Kind::kRule, helper});
        return;
      }
      case Expr::Kind::kRepeat: return emit_repeat(owner, expr, out);
    }
  }

  // A class lowers to the same element wherever it is copied (x{m,n} copies x): computed once.
  void emit_class(std::int32_t owner, const Expr& expr, std::vector<Element>& out) {
    count(1);
    const auto [it, added] = class_elements_.emplace(&expr, Element{});
    if (added) it->second = class_element(owner, expr);
    out.push_back(it->second);
  }

  Element class_element(std::int32_t owner, const Expr& expr) {
    std::vector<ByteRangeSequence> sequences;
    for (const CodePointRange r : encodable_ranges(expr.ranges, expr.negated))
      utf8_sequences(r.first, r.last, sequences);
    if (sequences.empty()) fail("grammar: rule '{}' has a character class that matches nothing", root_name(owner));
    // One-byte pieces share one set; longer ones are alternatives of a helper rule.
    ByteSet single{};
    std::vector<ByteRangeSequence> longer;
    for (const ByteRangeSequence& s : sequences) {
      if (s.size() == 1) {
        const ByteSet piece = byte_range(s[0].first, s[0].second);
        for (int w = 0; w < 4; ++w) single[w] |= piece[w];
      } else {
        longer.push_back(s);
      }
    }
    if (longer.empty()) return bytes(single);
    const std::int32_t helper = add_helper(owner);
    if (single != ByteSet{}) push_alternative(helper, {bytes(single)});
    for (const ByteRangeSequence& s : longer) {
      std::vector<Element> elements;
      for (const auto& [first, last] : s) elements.push_back(bytes(byte_range(first, last)));
      count(elements.size());
      push_alternative(helper, std::move(elements));
    }
    return {Element::Kind::kRule, helper};
  }

  // x{m,n}: m copies of x, then a chain of n - m optional copies (x{m,}: a loop H ::= x H | ε).
  void emit_repeat(std::int32_t owner, const Expr& expr, std::vector<Element>& out) {
    const Expr& child = *expr.children.at(0);
    for (std::int64_t i = 0; i < expr.min; ++i) emit(owner, child, out);
    if (expr.max == Expr::kUnbounded) {
      const std::int32_t loop = add_helper(owner);
      std::vector<Element> again;
      emit(owner, child, again);
      again.push_back({Element::Kind::kRule, loop});
      count(1);
      push_alternative(loop, std::move(again));
      push_alternative(loop, {});
      count(1);
      out.push_back({Element::Kind::kRule, loop});
      return;
    }
    std::optional<std::int32_t> tail;
    for (std::int64_t i = expr.min; i < expr.max; ++i) {
      const std::int32_t optional = add_helper(owner);
      std::vector<Element> present;
      emit(owner, child, present);
      if (tail) present.push_back({Element::Kind::kRule, *tail});
      if (tail) count(1);
      push_alternative(optional, std::move(present));
      push_alternative(optional, {});
      tail = optional;
    }
    if (tail) {
      count(1);
      out.push_back({Element::Kind::kRule, *tail});
    }
  }

  // The user's rule a helper belongs to (helpers are named "<rule>#<n>").
  std::string_view root_name(std::int32_t rule) const {
    const std::string& name = grammar_.rule_names[rule];
    return std::string_view(name).substr(0, name.find('#'));
  }

  // A rule that can reach itself without consuming a byte, through a call that must return
  // (one not last in its alternative), would make the top-down matcher push frames forever:
  // refuse it, naming the rule. A cycle of tail calls only (a loop over something that may be
  // empty, such as (a?)*) keeps the same stack and is run.
  void refuse_left_recursion() const {
    const std::optional<LeftRecursion> found = find_left_recursion(alternatives_);
    if (!found) return;
    fail(
        "grammar: rule '{}' is left-recursive (it can reach itself through '{}' before matching anything); "
        "rewrite it to recurse on the right",
        root_name(found->rule), root_name(found->through));
  }

  Grammar grammar_;
  std::map<std::string, std::int32_t> ids_;
  std::map<ByteSet, std::int32_t> set_ids_;
  std::map<std::int32_t, int> helpers_;
  std::map<const Expr*, Element> class_elements_;
  RuleAlternatives alternatives_;  // rule → its alternatives, kEnd added by finish()
  std::size_t size_ = 0;
};

}  // namespace

Grammar lower(const RuleSet& rules) { return Lowering(rules).finish(); }

bool matches(const Grammar& grammar, std::string_view text) {
  StackAutomaton automaton(grammar);
  return automaton.accepts_end(automaton.advance(automaton.start(), text));
}

}  // namespace kiln::grammar
