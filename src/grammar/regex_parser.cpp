// A recursive-descent parser of Python `re` syntax over the pattern's code points (positions in
// errors are code point indices, as Python reports them). Runs of plain characters become one
// literal; a quantifier takes only the character before it.
#include "grammar/regex_parser.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"
#include "util/utf8.hpp"

namespace kiln::grammar {
namespace {

// NOTE: groups nest by recursion; a bound keeps hostile patterns from exhausting the stack.
constexpr int kMaxNesting = 256;

// NOTE: \d \w \s take Python's re.ASCII meanings, which are also ECMA-262's for \d and \w (the
// dialect JSON Schema names for `pattern`): a constraint "\d{4}" means ASCII digits to the
// schema's author, and Unicode classes would let a model emit Arabic-Indic digits that no
// downstream parser of "a year" accepts. \s differs from ECMA-262 (no U+00A0, U+FEFF, ...);
// Python's ASCII set is what the goldens (tools/make_regex_goldens.py) check against.
const std::vector<CodePointRange> kDigit = {{'0', '9'}};
const std::vector<CodePointRange> kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const std::vector<CodePointRange> kSpace = {{'\t', '\r'}, {' ', ' '}};  // \t \n \v \f \r and space

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_octal(char32_t c) { return c >= '0' && c <= '7'; }
bool is_ascii_letter(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_surrogate(char32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

// [first, last] ranges (sorted, disjoint) -> the code points outside them.
std::vector<CodePointRange> complement(const std::vector<CodePointRange>& ranges) {
  std::vector<CodePointRange> out;
  char32_t next = 0;
  for (const CodePointRange& r : ranges) {
    if (r.first > next) out.push_back({next, r.first - 1});
    next = r.last + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

// What one escape or class member stands for: a code point, or a set (\d, \W, ...).
struct Unit {
  char32_t code_point = 0;
  bool is_set = false;
  std::vector<CodePointRange> ranges;  // when is_set
  bool negated = false;                // when is_set
};

Unit point(char32_t c) {
  Unit unit;
  unit.code_point = c;
  return unit;
}

class RegexParser {
 public:
  explicit RegexParser(std::string_view pattern) : pattern_(pattern) {}

  ExprPtr parse() {
    const std::size_t valid = valid_utf8_prefix(pattern_);
    std::size_t at = 0;
    while (at < valid) cps_.push_back(next_code_point(pattern_, at));
    if (valid != pattern_.size()) fail_at(cps_.size(), "invalid UTF-8 in the pattern");
    ExprPtr expr = parse_alternation(0);
    if (!at_end()) fail_at(pos_, "unbalanced parenthesis: ')' closes no group");
    return expr;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail_at(std::size_t pos, fmt::format_string<Args...> format, Args&&... args) const {
    fail_with(ErrorKind::kInvalidInput, pos, fmt::format(format, std::forward<Args>(args)...));
  }

  // A valid regex using a construct a grammar cannot express (or kiln does not take).
  template <typename... Args>
  [[noreturn]] void unsupported_at(std::size_t pos, fmt::format_string<Args...> format, Args&&... args) const {
    fail_with(ErrorKind::kUnsupported, pos, fmt::format(format, std::forward<Args>(args)...));
  }

  [[noreturn]] void fail_with(ErrorKind kind, std::size_t pos, const std::string& message) const {
    // A long pattern is shown as the 40 code points either side of the error.
    constexpr std::size_t kContext = 40;
    const std::size_t begin = pos > kContext ? pos - kContext : 0;
    const std::size_t end = std::min(cps_.size(), pos + kContext);
    std::string shown = begin > 0 ? "..." : "";
    for (std::size_t i = begin; i < end; ++i) append_utf8(shown, cps_[i]);
    if (end < cps_.size()) shown += "...";
    fail(kind, "regex \"{}\" at position {}: {}", shown, pos, message);
  }

  bool at_end() const { return pos_ >= cps_.size(); }
  char32_t peek(std::size_t ahead = 0) const { return pos_ + ahead < cps_.size() ? cps_[pos_ + ahead] : 0; }
  bool has(std::size_t ahead) const { return pos_ + ahead < cps_.size(); }
  bool at_escape(char32_t letter) const { return peek() == '\\' && has(1) && peek(1) == letter; }

  ExprPtr parse_alternation(int depth) {
    std::vector<ExprPtr> alternatives;
    alternatives.push_back(parse_sequence(depth));
    while (peek() == '|' && !at_end()) {
      ++pos_;
      alternatives.push_back(parse_sequence(depth));
    }
    return alternation(std::move(alternatives));
  }

  // `^` / \A may open and `$` / \Z may close a top-level alternative: under fullmatch they hold
  // there and nowhere else can we promise they hold, so they are refused elsewhere.
  ExprPtr parse_sequence(int depth) {
    const bool top = depth == 0;
    if (top && peek() == '^' && has(0))
      ++pos_;
    else if (top && at_escape('A'))
      pos_ += 2;
    std::vector<ExprPtr> items;
    std::string run;  // plain characters not yet emitted as one literal
    const auto flush_run = [&] {
      if (!run.empty()) items.push_back(literal(std::move(run))), run.clear();
    };
    while (!at_end() && peek() != '|' && peek() != ')') {
      const bool dollar = peek() == '$', big_z = at_escape('Z');
      if (dollar || big_z) {
        const std::size_t after = pos_ + (dollar ? 1 : 2);
        if (!top || (after < cps_.size() && cps_[after] != '|'))
          unsupported_at(pos_, "anchor '{}' is supported only at the end of the pattern", dollar ? "$" : "\\Z");
        pos_ = after;
        break;
      }
      if (peek() == '^' || at_escape('A'))
        unsupported_at(pos_, "anchor '{}' is supported only at the start of the pattern", peek() == '^' ? "^" : "\\A");
      if (peek() == '(' && peek(1) == '?' && peek(2) == '#') {
        skip_comment();
        continue;
      }
      std::optional<char32_t> ch;
      ExprPtr atom = parse_atom(depth, ch);
      if (auto bounds = parse_quantifier()) {
        flush_run();
        items.push_back(repeat(ch ? literal(utf8_of(*ch)) : atom, bounds->first, bounds->second));
      } else if (ch) {
        append_utf8(run, *ch);
      } else {
        flush_run();
        items.push_back(std::move(atom));
      }
    }
    flush_run();
    return sequence(std::move(items));
  }

  static std::string utf8_of(char32_t c) {
    std::string s;
    append_utf8(s, c);
    return s;
  }

  void skip_comment() {
    const std::size_t open = pos_;
    while (!at_end() && peek() != ')') ++pos_;
    if (at_end()) fail_at(open, "comment (?#... is not closed by ')'");
    ++pos_;
  }

  // One atom; `ch` is set (and the result null) when it is a single plain character.
  ExprPtr parse_atom(int depth, std::optional<char32_t>& ch) {
    const std::size_t at = pos_;
    const char32_t c = peek();
    if (c == '(') return parse_group(depth);
    if (c == '[') return parse_class();
    if (c == '.') {
      ++pos_;
      return char_class({{'\n', '\n'}}, /*negated=*/true);
    }
    if (c == '*' || c == '+' || c == '?') fail_at(at, "nothing to repeat before '{}'", static_cast<char>(c));
    if (c == '{' && parse_braces()) fail_at(at, "nothing to repeat before the quantifier");
    if (c == '\\') {
      Unit unit = parse_escape(/*in_class=*/false);
      if (unit.is_set) return char_class(std::move(unit.ranges), unit.negated);
      ch = unit.code_point;
      return nullptr;
    }
    ch = c;
    ++pos_;
    return nullptr;
  }

  ExprPtr parse_group(int depth) {
    const std::size_t open = pos_++;
    if (peek() == '?') {
      const char32_t kind = peek(1);
      if (kind == ':') {
        pos_ += 2;
      } else if (kind == 'P' && peek(2) == '<') {
        pos_ += 3;
        skip_group_name(open);
      } else if (kind == 'P' && peek(2) == '=') {
        unsupported_at(open, "backreference (?P=name) is not supported");
      } else if (kind == '<' && (peek(2) == '=' || peek(2) == '!')) {
        unsupported_at(open, "lookbehind (?<{}...) is not supported", static_cast<char>(peek(2)));
      } else if (kind == '<') {
        pos_ += 2;
        skip_group_name(open);
      } else if (kind == '=' || kind == '!') {
        unsupported_at(open, "lookahead (?{}...) is not supported", static_cast<char>(kind));
      } else if (kind == '>') {
        unsupported_at(open, "atomic group (?>...) is not supported");
      } else if (kind == '(') {
        unsupported_at(open, "conditional group (?(...)...) is not supported");
      } else if (kind != 0 && std::string_view("aiLmsux-").find(static_cast<char>(kind)) != std::string_view::npos) {
        unsupported_at(open, "inline flags (?{}...) are not supported", static_cast<char>(kind));
      } else {
        fail_at(open, "unknown group syntax after '(?'");
      }
    }
    if (depth + 1 > kMaxNesting) fail_at(open, "groups nest deeper than {} levels", kMaxNesting);
    ExprPtr inner = parse_alternation(depth + 1);
    if (peek() != ')' || at_end()) fail_at(open, "missing ')': the group opened here is not closed");
    ++pos_;
    return inner;
  }

  // A group's name up to '>': the name is not used (groups only group here).
  void skip_group_name(std::size_t open) {
    const std::size_t start = pos_;
    while (!at_end() && peek() != '>' && peek() != ')') {
      const char32_t c = peek();
      if (!(is_ascii_letter(c) || is_digit(c) || c == '_' || c >= 0x80) || (pos_ == start && is_digit(c)))
        fail_at(pos_, "bad character in the group name");
      ++pos_;
    }
    if (pos_ == start || peek() != '>' || at_end()) fail_at(open, "group name must be an identifier closed by '>'");
    ++pos_;
  }

  // `*` `+` `?` `{...}` and a lazy `?` after it; nullopt when none stands here.
  std::optional<std::pair<std::int64_t, std::int64_t>> parse_quantifier() {
    std::optional<std::pair<std::int64_t, std::int64_t>> bounds;
    const std::size_t at = pos_;
    switch (at_end() ? 0 : peek()) {
      case '*': ++pos_, bounds = {0, Expr::kUnbounded}; break;
      case '+': ++pos_, bounds = {1, Expr::kUnbounded}; break;
      case '?': ++pos_, bounds = {0, 1}; break;
      case '{': bounds = parse_braces(); break;
      default: break;
    }
    if (!bounds) return bounds;
    if (peek() == '?' && has(0)) {
      ++pos_;  // lazy: the same language, so the same grammar
    } else if (peek() == '+' && has(0)) {
      unsupported_at(pos_, "possessive quantifier '+' after the quantifier at {} is not supported", at);
    }
    const std::size_t next = pos_;
    if (peek() == '*' || peek() == '+' || peek() == '?' || (peek() == '{' && parse_braces()))
      fail_at(next, "multiple repeat: a quantifier follows the quantifier at {}", at);
    pos_ = next;
    return bounds;
  }

  // Python's rule: `{` starts a quantifier only when it reads as {m}, {m,}, {,n}, {m,n} or {,};
  // otherwise it is a literal '{' and nothing is consumed.
  std::optional<std::pair<std::int64_t, std::int64_t>> parse_braces() {
    const std::size_t open = pos_;
    if (peek() != '{' || peek(1) == '}') return std::nullopt;
    ++pos_;
    const auto read_count = [&]() -> std::optional<std::int64_t> {
      const std::size_t start = pos_;
      std::int64_t value = 0;
      while (has(0) && is_digit(peek())) {
        value = std::min<std::int64_t>(value * 10 + (peek() - '0'), kRegexMaxRepeat + 1);
        ++pos_;
      }
      if (pos_ == start) return std::nullopt;
      return value;
    };
    const std::optional<std::int64_t> lo = read_count();
    std::optional<std::int64_t> hi = lo;
    bool comma = false;
    if (peek() == ',' && has(0)) ++pos_, comma = true, hi = read_count();
    if (peek() != '}' || at_end()) {
      pos_ = open;
      return std::nullopt;
    }
    ++pos_;
    const std::int64_t min = lo.value_or(0);
    const std::int64_t max = hi ? *hi : (comma ? Expr::kUnbounded : min);
    if (min > kRegexMaxRepeat || max > kRegexMaxRepeat)
      unsupported_at(open, "repetition bound above the supported maximum {} (kRegexMaxRepeat)", kRegexMaxRepeat);
    if (max != Expr::kUnbounded && min > max)
      fail_at(open, "repetition {{{},{}}} has its minimum above its maximum", min, max);
    return std::pair{min, max};
  }

  ExprPtr parse_class() {
    const std::size_t open = pos_++;
    bool negated = false;
    if (peek() == '^' && has(0)) ++pos_, negated = true;
    std::vector<CodePointRange> ranges;
    for (bool first = true;; first = false) {
      if (at_end()) fail_at(open, "character class is not closed by ']'");
      if (peek() == ']' && !first) break;
      const std::size_t start = pos_;
      Unit low = parse_class_unit();
      if (peek() == '-' && has(1) && peek(1) != ']') {
        ++pos_;
        const std::size_t high_at = pos_;
        Unit high = parse_class_unit();
        if (low.is_set || high.is_set) fail_at(low.is_set ? start : high_at, "a class escape cannot end a range");
        if (low.code_point > high.code_point) fail_at(start, "range end is below its start");
        ranges.push_back({low.code_point, high.code_point});
      } else if (low.is_set) {
        const auto& set = low.negated ? complement(low.ranges) : low.ranges;
        ranges.insert(ranges.end(), set.begin(), set.end());
      } else {
        ranges.push_back({low.code_point, low.code_point});
      }
    }
    ++pos_;
    return char_class(std::move(ranges), negated);
  }

  Unit parse_class_unit() {
    if (peek() == '\\') return parse_escape(/*in_class=*/true);
    return point(cps_[pos_++]);
  }

  // The escape at pos_ (a backslash). Anchors reaching here are misplaced (parse_sequence takes
  // the ones it accepts).
  Unit parse_escape(bool in_class) {
    const std::size_t at = pos_++;
    if (at_end()) fail_at(at, "the pattern ends with a lone '\\'");
    const char32_t c = cps_[pos_++];
    const auto set = [](const std::vector<CodePointRange>& ranges, bool negated) {
      Unit unit;
      unit.is_set = true, unit.ranges = ranges, unit.negated = negated;
      return unit;
    };
    switch (c) {
      case 'd': return set(kDigit, false);
      case 'D': return set(kDigit, true);
      case 'w': return set(kWord, false);
      case 'W': return set(kWord, true);
      case 's': return set(kSpace, false);
      case 'S': return set(kSpace, true);
      case 'n': return point('\n');
      case 't': return point('\t');
      case 'r': return point('\r');
      case 'f': return point('\f');
      case 'v': return point('\v');
      case 'a': return point('\a');
      case 'x': return point(parse_hex(at, 2));
      case 'u': return point(parse_hex(at, 4));
      case 'U': return point(parse_hex(at, 8));
      case 'b':
        if (in_class) return point('\b');
        unsupported_at(at, "word boundary \\b is not supported");
      case 'B':
        if (!in_class) unsupported_at(at, "word boundary \\B is not supported");
        break;
      case 'A':
      case 'Z':
        if (!in_class)
          unsupported_at(at, "anchor '\\{}' is supported only at the {} of the pattern", static_cast<char>(c),
                         c == 'A' ? "start" : "end");
        break;
      case 'N': unsupported_at(at, "named characters \\N{{...}} are not supported");
      case 'p':
      case 'P': unsupported_at(at, "Unicode property classes \\{}{{...}} are not supported", static_cast<char>(c));
      default: break;
    }
    if (is_digit(c)) return point(parse_octal_or_refuse(at, c, in_class));
    if (is_ascii_letter(c)) fail_at(at, "bad escape '\\{}'", static_cast<char>(c));
    return point(c);  // an escaped metacharacter or other non-letter stands for itself
  }

  // Python's rules: \0 and three octal digits are octal escapes; outside a class any other
  // digit escape is a backreference, inside one up to three octal digits are.
  char32_t parse_octal_or_refuse(std::size_t at, char32_t first, bool in_class) {
    const bool three_octal = is_octal(first) && is_octal(peek()) && is_octal(peek(1)) && has(1);
    if (first != '0' && !in_class && !three_octal)
      unsupported_at(at, "backreference '\\{}' is not supported", static_cast<char>(first));
    if (!is_octal(first)) fail_at(at, "bad escape '\\{}'", static_cast<char>(first));
    std::uint32_t value = first - '0';
    for (int i = 0; i < 2 && has(0) && is_octal(peek()); ++i) value = value * 8 + (cps_[pos_++] - '0');
    if (value > 0377) fail_at(at, "octal escape above \\377");
    return value;
  }

  char32_t parse_hex(std::size_t at, int digits) {
    std::uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const char32_t c = at_end() ? 0 : peek();
      int digit = -1;
      if (c >= '0' && c <= '9') digit = static_cast<int>(c - '0');
      if (c >= 'a' && c <= 'f') digit = static_cast<int>(c - 'a' + 10);
      if (c >= 'A' && c <= 'F') digit = static_cast<int>(c - 'A' + 10);
      if (digit < 0) fail_at(at, "escape needs {} hex digits", digits);
      value = value * 16 + static_cast<std::uint32_t>(digit);
      ++pos_;
    }
    if (value > kMaxCodePoint) fail_at(at, "escape names U+{:X}, beyond the last code point U+10FFFF", value);
    if (is_surrogate(value)) fail_at(at, "escape names U+{:04X}, a UTF-16 surrogate, not a character", value);
    return value;
  }

  std::string_view pattern_;
  std::vector<char32_t> cps_;  // the pattern decoded
  std::size_t pos_ = 0;        // index into cps_
};

}  // namespace

ExprPtr regex_to_expr(std::string_view pattern) { return RegexParser(pattern).parse(); }

RuleSet regex_to_rules(std::string_view pattern) {
  RuleSet rules;
  rules.rules.push_back({"root", regex_to_expr(pattern)});
  rules.root = "root";
  return rules;
}

}  // namespace kiln::grammar
