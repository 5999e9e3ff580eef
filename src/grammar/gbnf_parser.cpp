// A recursive-descent GBNF parser over the UTF-8 text; positions are byte offsets until an error
// turns one into line:column. Bodies become Expr trees as they are read; rule references are
// checked once every rule is known, since a grammar may use a rule before defining it.
#include "grammar/gbnf_parser.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "util/error.hpp"
#include "util/utf8.hpp"

namespace kiln::grammar {
namespace {

// NOTE: groups nest by recursion; a bound keeps hostile input from exhausting the stack.
constexpr int kMaxNesting = 256;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_surrogate(char32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

// How an error message shows one code point: printable ASCII as itself, the rest as U+XXXX.
std::string describe_code_point(char32_t c) {
  if (c >= 0x21 && c < 0x7F) return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("U+{:04X}", static_cast<std::uint32_t>(c));
}

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : text_(text) {}

  RuleSet parse() {
    const std::size_t valid = valid_utf8_prefix(text_);
    if (valid != text_.size()) fail_at(valid, "invalid UTF-8 (byte 0x{:02X})", byte_at(valid));
    skip_space();
    while (!at_end()) {
      parse_rule();
      skip_space();
    }
    return finish();
  }

 private:
  struct Position {
    std::size_t line = 1;
    std::size_t column = 1;
  };

  Position position_of(std::size_t offset) const {
    Position p;
    for (std::size_t i = 0; i < offset && i < text_.size(); ++i) {
      const auto b = static_cast<unsigned char>(text_[i]);
      if (b == '\n') {
        ++p.line, p.column = 1;
      } else if ((b & 0xC0) != 0x80) {
        ++p.column;  // count code points, not continuation bytes
      }
    }
    return p;
  }

  std::string where(std::size_t offset) const {
    const Position p = position_of(offset);
    return fmt::format("{}:{}", p.line, p.column);
  }

  template <typename... Args>
  [[noreturn]] void fail_at(std::size_t offset, fmt::format_string<Args...> format, Args&&... args) const {
    fail("GBNF grammar at {}: {}", where(offset), fmt::format(format, std::forward<Args>(args)...));
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  unsigned byte_at(std::size_t offset) const { return static_cast<unsigned char>(text_[offset]); }

  // What stands at the current position, for "expected X, found Y".
  std::string found() const {
    if (at_end()) return "the end of the grammar";
    if (peek() == '\n') return "the end of the line";
    std::size_t p = pos_;
    return describe_code_point(next_code_point(text_, p));
  }

  // Blanks, newlines and `#` comments. Newlines never end a rule by themselves: the next
  // `name ::=` does (at_rule_start), so this accepts every layout llama.cpp accepts.
  void skip_space() {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && peek() != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  void skip_blanks() {
    while (peek() == ' ' || peek() == '\t') ++pos_;
  }

  // True when `name ::=` starts here: the current rule's body has ended.
  bool at_rule_start() const {
    std::size_t p = pos_;
    while (p < text_.size() && is_name_char(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return text_.substr(p, 3) == "::=";
  }

  std::string parse_name() {
    const std::size_t start = pos_;
    while (is_name_char(peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  void parse_rule() {
    const std::size_t start = pos_;
    if (!is_name_char(peek())) fail_at(pos_, "expected a rule name (letters, digits, '-'), found {}", found());
    std::string name = parse_name();
    skip_blanks();
    if (text_.substr(pos_, 3) != "::=")
      fail_at(pos_, "expected '::=' after the rule name '{}', found {}", name, found());
    pos_ += 3;
    ExprPtr body = parse_alternation(0);
    if (!at_end() && !at_rule_start()) {
      if (peek() == ')') fail_at(pos_, "')' closes no group in rule '{}'", name);
      fail_at(pos_, "expected '|', an item or the next rule, found {}", found());
    }
    auto [it, inserted] = definitions_.emplace(name, start);
    if (!inserted) fail_at(start, "rule '{}' is defined twice (first at {})", name, where(it->second));
    rules_.push_back({std::move(name), std::move(body)});
  }

  ExprPtr parse_alternation(int depth) {
    std::vector<ExprPtr> alternatives;
    alternatives.push_back(parse_sequence(depth));
    while (peek() == '|') {
      ++pos_;
      alternatives.push_back(parse_sequence(depth));
    }
    return alternation(std::move(alternatives));
  }

  // Items up to `|`, `)`, the end, or (at the top level) the next rule. An empty sequence
  // matches the empty string, as in llama.cpp (`a ::= "x" | `).
  ExprPtr parse_sequence(int depth) {
    std::vector<ExprPtr> items;
    for (;;) {
      skip_space();
      if (at_end() || peek() == '|' || peek() == ')') break;
      if (at_rule_start()) {
        if (depth > 0) fail_at(pos_, "expected ')' before the next rule '{}' begins", peek_name());
        break;
      }
      ExprPtr item = parse_item(depth);
      for (;;) {
        skip_space();
        if (!parse_postfix(item)) break;
      }
      items.push_back(std::move(item));
    }
    return sequence(std::move(items));
  }

  std::string peek_name() const {
    std::size_t p = pos_;
    while (p < text_.size() && is_name_char(text_[p])) ++p;
    return std::string(text_.substr(pos_, p - pos_));
  }

  ExprPtr parse_item(int depth) {
    const char c = peek();
    if (c == '"') return parse_literal();
    if (c == '[') return parse_class();
    if (c == '.') {
      ++pos_;
      return char_class({}, /*negated=*/true);  // any code point
    }
    if (c == '(') {
      const std::size_t open = pos_++;
      if (depth + 1 > kMaxNesting) fail_at(open, "groups nest deeper than {} levels", kMaxNesting);
      ExprPtr inner = parse_alternation(depth + 1);
      if (peek() != ')') fail_at(pos_, "expected ')' to close the group opened at {}, found {}", where(open), found());
      ++pos_;
      return inner;
    }
    if (is_name_char(c)) {
      const std::size_t start = pos_;
      std::string name = parse_name();
      references_.emplace(name, start);  // keeps the first reference's place
      return rule_ref(std::move(name));
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') fail_at(pos_, "'{}' must follow an item it repeats", c);
    if (c == '<')
      fail(ErrorKind::kUnsupported,
           "GBNF grammar at {}: token references <...> are not supported; spell the token's text as a string",
           where(pos_));
    fail_at(pos_, "expected a string, a character class, '.', '(' or a rule name, found {}", found());
  }

  // Applies one `*` `+` `?` or `{...}` to `item`; false when none stands here.
  bool parse_postfix(ExprPtr& item) {
    switch (peek()) {
      case '*': ++pos_, item = star(item); return true;
      case '+': ++pos_, item = plus(item); return true;
      case '?': ++pos_, item = optional(item); return true;
      case '{': item = parse_braces(std::move(item)); return true;
      default: return false;
    }
  }

  // `{m}` `{m,}` `{m,n}` `{,n}`.
  ExprPtr parse_braces(ExprPtr item) {
    const std::size_t open = pos_++;
    skip_blanks();
    const auto read_count = [&]() -> std::int64_t {
      const std::size_t start = pos_;
      std::int64_t value = 0;
      while (is_digit(peek())) {
        value = value * 10 + (peek() - '0');
        if (value > kGbnfMaxRepeat)
          fail_at(start, "repetition count exceeds the supported maximum {} (kGbnfMaxRepeat)", kGbnfMaxRepeat);
        ++pos_;
      }
      return pos_ == start ? -1 : value;
    };
    const std::int64_t first = read_count();
    skip_blanks();
    std::int64_t min = first, max = first;
    if (peek() == ',') {
      ++pos_;
      skip_blanks();
      min = first < 0 ? 0 : first;
      max = read_count();
      if (max < 0) max = Expr::kUnbounded;
      if (first < 0 && max == Expr::kUnbounded) fail_at(open, "'{{,}}' names no bound; write '*' or '{{m,}}'");
      skip_blanks();
    } else if (first < 0) {
      fail_at(pos_, "expected a repetition count after '{{', found {}", found());
    }
    if (peek() != '}')
      fail_at(pos_, "expected '}}' to close the repetition opened at {}, found {}", where(open), found());
    ++pos_;
    if (max != Expr::kUnbounded && min > max)
      fail_at(open, "repetition {{{},{}}} has its minimum above its maximum", min, max);
    return repeat(std::move(item), min, max);
  }

  ExprPtr parse_literal() {
    const std::size_t open = pos_++;
    std::string text;
    for (;;) {
      if (at_end()) fail_at(open, "string literal is not closed by '\"'");
      if (peek() == '"') break;
      const std::size_t at = pos_;
      const char32_t c = parse_char();
      if (is_surrogate(c)) fail_at(at, "U+{:04X} is a UTF-16 surrogate, not a character", static_cast<unsigned>(c));
      append_utf8(text, c);
    }
    ++pos_;
    return literal(std::move(text));
  }

  ExprPtr parse_class() {
    const std::size_t open = pos_++;
    bool negated = false;
    if (peek() == '^') ++pos_, negated = true;
    std::vector<CodePointRange> ranges;
    for (;;) {
      if (at_end()) fail_at(open, "character class is not closed by ']'");
      if (peek() == ']') break;
      const std::size_t first_at = pos_;
      const char32_t first = parse_char();
      char32_t last = first;
      if (peek() == '-' && peek(1) != ']' && pos_ + 1 < text_.size()) {
        ++pos_;
        last = parse_char();
        if (first > last)
          fail_at(first_at, "range {}-{} ends before it starts", describe_code_point(first), describe_code_point(last));
      }
      ranges.push_back({first, last});
    }
    if (ranges.empty()) fail_at(open, "empty character class matches nothing");
    ++pos_;
    return char_class(std::move(ranges), negated);
  }

  // One character of a literal or class: a raw code point or an escape.
  char32_t parse_char() {
    if (peek() != '\\') return next_code_point(text_, pos_);
    const std::size_t at = pos_++;
    if (at_end()) fail_at(at, "'\\' at the end of the grammar");
    const char c = text_[pos_++];
    switch (c) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case '\\': return '\\';
      case '"': return '"';
      case '[': return '[';
      case ']': return ']';
      case 'x': return parse_hex(at, 2);
      case 'u': return parse_hex(at, 4);
      case 'U': return parse_hex(at, 8);
      default: {
        --pos_;
        const std::string what = c > ' ' && c < 0x7F ? fmt::format("'\\{}'", c) : "'\\' before " + found();
        fail_at(at, "unknown escape {}; expected one of \\n \\t \\r \\\\ \\\" \\[ \\] \\xHH \\uHHHH \\UHHHHHHHH", what);
      }
    }
  }

  char32_t parse_hex(std::size_t escape_at, int digits) {
    std::uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = peek();
      int digit = -1;
      if (c >= '0' && c <= '9') digit = c - '0';
      if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      if (digit < 0)
        fail_at(pos_, "expected {} hex digits in the escape at {}, found {}", digits, where(escape_at), found());
      value = value * 16 + static_cast<std::uint32_t>(digit);
      ++pos_;
    }
    if (value > kMaxCodePoint) fail_at(escape_at, "escape names U+{:X}, beyond the last code point U+10FFFF", value);
    return static_cast<char32_t>(value);
  }

  RuleSet finish() {
    const std::pair<const std::string, std::size_t>* first_undefined = nullptr;
    for (const auto& reference : references_) {
      if (definitions_.count(reference.first)) continue;
      if (!first_undefined || reference.second < first_undefined->second) first_undefined = &reference;
    }
    if (first_undefined)
      fail_at(first_undefined->second, "rule '{}' is referenced but never defined", first_undefined->first);
    if (!definitions_.count("root")) fail("GBNF grammar has no rule 'root' (the rule a whole output must match)");
    return RuleSet{std::move(rules_), "root"};
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<Rule> rules_;
  std::map<std::string, std::size_t, std::less<>> definitions_;  // name -> offset of its definition
  std::map<std::string, std::size_t, std::less<>> references_;   // name -> offset of its first use
};

}  // namespace

RuleSet parse_gbnf(std::string_view text) { return GbnfParser(text).parse(); }

}  // namespace kiln::grammar
