// Number and string literals as Jinja2's lexer reads them (jinja2/lexer.py float_re,
// integer_re, and string bodies decoded with Python's "unicode-escape" codec).
#include "tokenizer/jinja/literals.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include "tokenizer/jinja/error.hpp"
#include "tokenizer/jinja/unicode.hpp"

namespace kiln::jinja {

void syntax_error(size_t offset, std::string message) {
  throw Exception{ErrorType::kTemplateSyntaxError, std::move(message), static_cast<uint32_t>(offset)};
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// `(\d+_)*\d+`: digits with single underscores between them; npos when no digit at pos.
size_t match_digits(std::string_view s, size_t pos) {
  if (pos >= s.size() || !is_digit(s[pos])) return std::string_view::npos;
  while (pos < s.size()) {
    if (is_digit(s[pos])) {
      ++pos;
    } else if (s[pos] == '_' && pos + 1 < s.size() && is_digit(s[pos + 1])) {
      pos += 2;
    } else {
      break;
    }
  }
  return pos;
}

size_t match_exponent(std::string_view s, size_t pos) {
  if (pos >= s.size() || (s[pos] != 'e' && s[pos] != 'E')) return std::string_view::npos;
  ++pos;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
  return match_digits(s, pos);
}

}  // namespace

size_t match_float(std::string_view s, size_t pos) {
  constexpr size_t npos = std::string_view::npos;
  if (pos > 0 && s[pos - 1] == '.') return npos;  // (?<!\.)
  const size_t whole = match_digits(s, pos);
  if (whole == npos) return npos;
  size_t fraction = npos;
  if (whole < s.size() && s[whole] == '.') fraction = match_digits(s, whole + 1);
  if (fraction != npos) {
    if (size_t e = match_exponent(s, fraction); e != npos) return e;
  }
  if (size_t e = match_exponent(s, whole); e != npos) return e;
  return fraction;
}

namespace {

bool in_digit_set(char c, int base) {
  if (base == 2) return c == '0' || c == '1';
  if (base == 8) return c >= '0' && c <= '7';
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// `(_?[set])+` after a 0b/0o/0x prefix.
size_t match_prefixed_digits(std::string_view s, size_t pos, int base) {
  const size_t start = pos;
  while (pos < s.size()) {
    if (s[pos] == '_' && pos + 1 < s.size() && in_digit_set(s[pos + 1], base)) {
      pos += 2;
    } else if (in_digit_set(s[pos], base)) {
      ++pos;
    } else {
      break;
    }
  }
  return pos == start ? std::string_view::npos : pos;
}

}  // namespace

size_t match_integer(std::string_view s, size_t pos, int& base) {
  if (pos >= s.size() || !is_digit(s[pos])) return std::string_view::npos;
  if (s[pos] == '0' && pos + 1 < s.size()) {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[pos + 1])));
    base = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 10;
    if (base != 10) {
      if (size_t end = match_prefixed_digits(s, pos + 2, base); end != std::string_view::npos) {
        return end;
      }
    }
  }
  base = 10;
  if (s[pos] != '0') return match_digits(s, pos);
  ++pos;  // 0(_?0)*
  while (pos < s.size()) {
    if (s[pos] == '0') {
      ++pos;
    } else if (s[pos] == '_' && pos + 1 < s.size() && s[pos + 1] == '0') {
      pos += 2;
    } else {
      break;
    }
  }
  return pos;
}

int64_t parse_integer(std::string_view text, int base, size_t offset) {
  std::string digits;
  for (char c : text.substr(base == 10 ? 0 : 2)) {
    if (c != '_') digits.push_back(c);
  }
  constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
  uint64_t value = 0;
  for (char c : digits) {
    const int d = is_digit(c) ? c - '0' : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    if (value > (kMax - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      throw Exception{ErrorType::kLimitError,
                      fmt::format("integer literal {} does not fit kiln's 64-bit integers", text),
                      static_cast<uint32_t>(offset)};
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return static_cast<int64_t>(value);
}

double parse_float(std::string_view literal) {
  std::string text;
  for (char c : literal) {
    if (c != '_') text.push_back(c);
  }
  double value = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec == std::errc::result_out_of_range) {
    // Python's float() saturates: 1e999 is inf, 1e-999 is 0.0.
    const bool tiny = text.find("e-") != std::string::npos || text.find("E-") != std::string::npos;
    value = tiny ? 0.0 : HUGE_VAL;
  }
  return value;
}

namespace {

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

// Decodes an escape after a backslash at body[i] as Python's "unicode-escape" codec does after
// Jinja's backslashreplace step; appends to out and advances i past the escape.
void decode_escape(std::string_view body, size_t& i, std::string& out, size_t offset) {
  const char c = body[i];
  auto hex_escape = [&](int digits, const char* name) {
    char32_t cp = 0;
    for (int k = 1; k <= digits; ++k) {
      if (i + static_cast<size_t>(k) >= body.size() ||
          !std::isxdigit(static_cast<unsigned char>(body[i + static_cast<size_t>(k)]))) {
        syntax_error(offset, std::string("truncated ") + name + " escape");
      }
      cp = cp * 16 + static_cast<char32_t>(hex_value(body[i + static_cast<size_t>(k)]));
    }
    if (cp > 0x10FFFF) syntax_error(offset, "illegal Unicode character");
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      syntax_error(offset,
                   "string literal holds a lone surrogate escape, which is not valid "
                   "UTF-8 text");
    }
    append_utf8(out, cp);
    i += static_cast<size_t>(digits) + 1;
  };
  switch (c) {
    case '\n': ++i; return;
    case '\\':
      out += '\\';
      ++i;
      return;
    case '\'':
      out += '\'';
      ++i;
      return;
    case '"':
      out += '"';
      ++i;
      return;
    case 'a':
      out += '\a';
      ++i;
      return;
    case 'b':
      out += '\b';
      ++i;
      return;
    case 'f':
      out += '\f';
      ++i;
      return;
    case 'n':
      out += '\n';
      ++i;
      return;
    case 'r':
      out += '\r';
      ++i;
      return;
    case 't':
      out += '\t';
      ++i;
      return;
    case 'v':
      out += '\v';
      ++i;
      return;
    case 'x': hex_escape(2, "\\xXX"); return;
    case 'u': hex_escape(4, "\\uXXXX"); return;
    case 'U': hex_escape(8, "\\UXXXXXXXX"); return;
    case 'N': syntax_error(offset, "\\N{...} escapes are not supported in kiln templates");
    default: break;
  }
  if (c >= '0' && c <= '7') {
    char32_t cp = 0;
    int n = 0;
    while (n < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7') {
      cp = cp * 8 + static_cast<char32_t>(body[i] - '0');
      ++i;
      ++n;
    }
    append_utf8(out, cp);
    return;
  }
  out += '\\';
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x80) {
    out += c;
    ++i;
    return;
  }
  // A backslash before a non-ASCII character: Python first spells the character as an escape
  // ("\xe9"), then decodes "\\" to one backslash and keeps the escape's letters as text.
  const char32_t cp = next_code_point(body, i);
  out += cp <= 0xFF     ? fmt::format("x{:02x}", static_cast<unsigned>(cp))
         : cp <= 0xFFFF ? fmt::format("u{:04x}", static_cast<unsigned>(cp))
                        : fmt::format("U{:08x}", static_cast<unsigned>(cp));
}

}  // namespace

std::string decode_string_literal(std::string_view body, size_t offset) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size();) {
    if (body[i] != '\\') {
      out += body[i++];
      continue;
    }
    ++i;
    decode_escape(body, i, out, offset);
  }
  return out;
}

}  // namespace kiln::jinja
