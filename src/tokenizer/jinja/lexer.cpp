// A hand-written equivalent of Jinja2's regex lexer (jinja2/lexer.py) for the default
// delimiters. Whitespace control follows its rules: "-" strips all whitespace on that side,
// "+" disables lstrip/trim, lstrip_blocks removes spaces before a block or comment tag that
// starts a line, trim_blocks removes the first newline after a block or comment tag.
#include "tokenizer/jinja/lexer.hpp"

#include <optional>

#include "tokenizer/jinja/error.hpp"
#include "tokenizer/jinja/literals.hpp"
#include "tokenizer/jinja/python_repr.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {
namespace {

// Python's str.rstrip() (all Unicode whitespace).
std::string_view rstrip_whitespace(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t i = start;
    if (!unicode::is_space(next_code_point(s, i))) break;
    end = start;
  }
  return s.substr(0, end);
}

bool all_whitespace(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (!unicode::is_space(next_code_point(s, i))) return false;
  }
  return !s.empty();
}

size_t skip_whitespace(std::string_view s, size_t pos) {
  while (pos < s.size()) {
    size_t next = pos;
    if (!unicode::is_space(next_code_point(s, next))) break;
    pos = next;
  }
  return pos;
}

struct Operator {
  std::string_view text;
  TokenType type;
};

// Longest first, as Jinja's operator regex.
constexpr Operator kOperators[] = {
    {"//", TokenType::kFloorDiv}, {"**", TokenType::kPow},      {"==", TokenType::kEq},    {"!=", TokenType::kNe},
    {">=", TokenType::kGtEq},     {"<=", TokenType::kLtEq},     {"+", TokenType::kAdd},    {"-", TokenType::kSub},
    {"*", TokenType::kMul},       {"/", TokenType::kDiv},       {"%", TokenType::kMod},    {"~", TokenType::kTilde},
    {"[", TokenType::kLBracket},  {"]", TokenType::kRBracket},  {"(", TokenType::kLParen}, {")", TokenType::kRParen},
    {"{", TokenType::kLBrace},    {"}", TokenType::kRBrace},    {">", TokenType::kGt},     {"<", TokenType::kLt},
    {"=", TokenType::kAssign},    {".", TokenType::kDot},       {":", TokenType::kColon},  {"|", TokenType::kPipe},
    {",", TokenType::kComma},     {";", TokenType::kSemicolon},
};

class Lexer {
 public:
  explicit Lexer(std::string_view source) : s_(source) {}

  std::vector<Token> take_tokens() { return std::move(tokens_); }

  std::vector<Token> run() {
    while (pos_ < s_.size()) lex_root();
    tokens_.push_back(Token{TokenType::kEof, static_cast<uint32_t>(s_.size()), {}, 0, 0});
    return std::move(tokens_);
  }

 private:
  void emit(TokenType type, size_t offset, std::string text = {}) {
    tokens_.push_back(Token{type, static_cast<uint32_t>(offset), std::move(text), 0, 0});
  }

  // Whitespace control applied to the data before a tag: `sign` is the tag's '-', '+' or 0.
  std::string_view strip_data(std::string_view text, char sign, bool is_variable) const {
    if (sign == '-') return rstrip_whitespace(text);
    if (sign != '+' && !is_variable) {                 // lstrip_blocks
      const size_t line_start = text.rfind('\n') + 1;  // npos + 1 == 0
      if ((line_start > 0 || line_starting_) && all_whitespace(text.substr(line_start))) {
        return text.substr(0, line_start);
      }
    }
    return text;
  }

  // `{%(-|+|)\s*raw\s*(-%}\s*|%})` at pos; returns the end of the match.
  std::optional<size_t> match_raw_begin(size_t pos) const {
    size_t p = pos + 2;
    if (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) ++p;
    p = skip_whitespace(s_, p);
    if (s_.substr(p, 3) != "raw") return std::nullopt;
    p = skip_whitespace(s_, p + 3);
    if (s_.substr(p, 3) == "-%}") return skip_whitespace(s_, p + 3);
    if (s_.substr(p, 2) == "%}") return p + 2;
    return std::nullopt;
  }

  void lex_root() {
    size_t tag = pos_;
    while (true) {
      tag = s_.find('{', tag);
      if (tag == std::string_view::npos || tag + 1 >= s_.size()) {
        emit(TokenType::kData, pos_, std::string(s_.substr(pos_)));
        pos_ = s_.size();
        return;
      }
      const char kind = s_[tag + 1];
      if (kind == '{' || kind == '%' || kind == '#') break;
      ++tag;
    }
    const char kind = s_[tag + 1];
    const char sign = tag + 2 < s_.size() && (s_[tag + 2] == '-' || s_[tag + 2] == '+') ? s_[tag + 2] : 0;
    const std::string_view data = strip_data(s_.substr(pos_, tag - pos_), sign, kind == '{');
    if (!data.empty()) emit(TokenType::kData, pos_, std::string(data));

    if (kind == '%') {
      if (auto raw_end = match_raw_begin(tag)) {
        line_starting_ = s_[*raw_end - 1] == '\n';
        pos_ = *raw_end;
        lex_raw_body(tag);
        return;
      }
    }
    pos_ = tag + 2 + (sign != 0 ? 1 : 0);
    line_starting_ = false;
    if (kind == '#') {
      lex_comment(tag);
    } else {
      lex_tag(kind == '{', tag);
    }
  }

  void lex_comment(size_t begin) {
    if (pos_ >= s_.size()) return;  // Jinja2's rules match nothing at the very end: no error
    const size_t close = s_.find("#}", pos_);
    if (close == std::string_view::npos) syntax_error(begin, "Missing end of comment tag");
    size_t end = close + 2;
    const char before = close > pos_ ? s_[close - 1] : 0;
    if (before == '-') {
      end = skip_whitespace(s_, end);
    } else if (before != '+' && end < s_.size() && s_[end] == '\n') {
      ++end;  // trim_blocks
    }
    line_starting_ = s_[end - 1] == '\n';
    pos_ = end;
  }

  void lex_raw_body(size_t begin) {
    if (pos_ >= s_.size()) return;  // as for comments: nothing left, nothing to report
    for (size_t open = s_.find("{%", pos_); open != std::string_view::npos; open = s_.find("{%", open + 1)) {
      size_t p = open + 2;
      char sign = 0;
      if (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) sign = s_[p++];
      p = skip_whitespace(s_, p);
      if (s_.substr(p, 6) != "endraw") continue;
      p = skip_whitespace(s_, p + 6);
      size_t end;
      if (s_.substr(p, 3) == "+%}") {
        end = p + 3;
      } else if (s_.substr(p, 3) == "-%}") {
        end = skip_whitespace(s_, p + 3);
      } else if (s_.substr(p, 2) == "%}") {
        end = p + 2;
        if (end < s_.size() && s_[end] == '\n') ++end;
      } else {
        continue;
      }
      const std::string_view data = strip_data(s_.substr(pos_, open - pos_), sign, false);
      if (!data.empty()) emit(TokenType::kData, pos_, std::string(data));
      line_starting_ = s_[end - 1] == '\n';
      pos_ = end;
      return;
    }
    syntax_error(begin, "Missing end of raw directive");
  }

  // Matches the end delimiter of the current tag at pos_, when brackets are balanced.
  std::optional<size_t> match_tag_end(bool variable) const {
    if (!brackets_.empty()) return std::nullopt;
    const std::string_view rest = s_.substr(pos_);
    if (variable) {
      if (rest.substr(0, 3) == "-}}") return skip_whitespace(s_, pos_ + 3);
      if (rest.substr(0, 2) == "}}") return pos_ + 2;
      return std::nullopt;
    }
    if (rest.substr(0, 3) == "+%}") return pos_ + 3;
    if (rest.substr(0, 3) == "-%}") return skip_whitespace(s_, pos_ + 3);
    if (rest.substr(0, 2) == "%}") {
      size_t end = pos_ + 2;
      if (end < s_.size() && s_[end] == '\n') ++end;  // trim_blocks
      return end;
    }
    return std::nullopt;
  }

  void lex_tag(bool variable, size_t begin) {
    emit(variable ? TokenType::kVariableBegin : TokenType::kBlockBegin, begin);
    brackets_.clear();
    while (pos_ < s_.size()) {
      if (auto end = match_tag_end(variable)) {
        emit(variable ? TokenType::kVariableEnd : TokenType::kBlockEnd, pos_);
        line_starting_ = s_[*end - 1] == '\n';
        pos_ = *end;
        return;
      }
      lex_tag_token();
    }
    // End of input inside a tag: the parser reports what it was expecting.
  }

  void lex_tag_token() {
    const size_t start = pos_;
    if (size_t ws = skip_whitespace(s_, pos_); ws != pos_) {
      pos_ = ws;
      return;
    }
    if (size_t end = match_float(s_, pos_); end != std::string_view::npos) {
      Token token{TokenType::kFloat, static_cast<uint32_t>(start), {}, 0, parse_float(s_.substr(start, end - start))};
      tokens_.push_back(std::move(token));
      pos_ = end;
      return;
    }
    int base = 10;
    if (size_t end = match_integer(s_, pos_, base); end != std::string_view::npos) {
      Token token{TokenType::kInteger,
                  static_cast<uint32_t>(start),
                  {},
                  parse_integer(s_.substr(start, end - start), base, start),
                  0};
      tokens_.push_back(std::move(token));
      pos_ = end;
      return;
    }
    size_t next = pos_;
    if (unicode::is_identifier_start(next_code_point(s_, next))) {
      size_t end = next;
      while (end < s_.size()) {
        size_t after = end;
        if (!unicode::is_identifier_continue(next_code_point(s_, after))) break;
        end = after;
      }
      emit(TokenType::kName, start, std::string(s_.substr(start, end - start)));
      pos_ = end;
      return;
    }
    if (s_[pos_] == '\'' || s_[pos_] == '"') {
      if (lex_string()) return;
    }
    lex_operator();
  }

  bool lex_string() {
    const char quote = s_[pos_];
    for (size_t p = pos_ + 1; p < s_.size(); ++p) {
      if (s_[p] == '\\') {
        ++p;
        continue;
      }
      if (s_[p] == quote) {
        emit(TokenType::kString, pos_, decode_string_literal(s_.substr(pos_ + 1, p - pos_ - 1), pos_));
        pos_ = p + 1;
        return true;
      }
    }
    return false;  // unterminated: Jinja reports the quote as an unexpected char
  }

  void lex_operator() {
    for (const Operator& op : kOperators) {
      if (s_.substr(pos_, op.text.size()) != op.text) continue;
      track_brackets(op.type);
      emit(op.type, pos_);
      pos_ += op.text.size();
      return;
    }
    size_t next = pos_;
    next_code_point(s_, next);
    syntax_error(pos_, fmt::format("unexpected char {} at {}", repr_string(s_.substr(pos_, next - pos_)),
                                   unicode::length(s_.substr(0, pos_))));
  }

  void track_brackets(TokenType type) {
    char close = 0;
    switch (type) {
      case TokenType::kLBrace: brackets_.push_back('}'); return;
      case TokenType::kLParen: brackets_.push_back(')'); return;
      case TokenType::kLBracket: brackets_.push_back(']'); return;
      case TokenType::kRBrace: close = '}'; break;
      case TokenType::kRParen: close = ')'; break;
      case TokenType::kRBracket: close = ']'; break;
      default: return;
    }
    if (brackets_.empty()) syntax_error(pos_, fmt::format("unexpected '{}'", close));
    const char expected = brackets_.back();
    brackets_.pop_back();
    if (expected != close) {
      syntax_error(pos_, fmt::format("unexpected '{}', expected '{}'", close, expected));
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  std::string brackets_;
  std::vector<Token> tokens_;
};

}  // namespace

std::string_view describe_token_type(TokenType type) {
  switch (type) {
    case TokenType::kData: return "template data / text";
    case TokenType::kVariableBegin: return "begin of print statement";
    case TokenType::kVariableEnd: return "end of print statement";
    case TokenType::kBlockBegin: return "begin of statement block";
    case TokenType::kBlockEnd: return "end of statement block";
    case TokenType::kName: return "name";
    case TokenType::kString: return "string";
    case TokenType::kInteger: return "integer";
    case TokenType::kFloat: return "float";
    case TokenType::kEof: return "end of template";
    default: break;
  }
  for (const Operator& op : kOperators) {
    if (op.type == type) return op.text;
  }
  return "?";
}

std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

std::vector<Token> tokenize(std::string_view source) {
  Lexer lexer(source);
  try {
    return lexer.run();
  } catch (const Exception& e) {
    std::vector<Token> tokens = lexer.take_tokens();
    tokens.push_back(Token{TokenType::kError, e.offset, e.message, static_cast<int64_t>(e.type), 0});
    tokens.push_back(Token{TokenType::kEof, static_cast<uint32_t>(source.size()), {}, 0, 0});
    return tokens;
  }
}

}  // namespace kiln::jinja
