// Character classes follow CPython's definitions over utf8proc's Unicode tables; case mapping
// uses the simple (one-to-one) mappings except ß, whose upper case is the two letters "SS".
#include "tokenizer/jinja/unicode.hpp"

#include <utf8proc.h>

#include <cstdlib>

namespace kiln::jinja::unicode {
namespace {

utf8proc_category_t category(char32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)); }

}  // namespace

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(next_code_point(s, i));
  return out;
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : s) append_utf8(out, cp);
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_valid(std::string_view s, size_t* error_offset) {
  const size_t valid = valid_utf8_prefix(s);
  if (valid == s.size()) return true;
  if (error_offset != nullptr) *error_offset = valid;
  return false;
}

bool is_space(char32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F)) return true;
  if (cp < 0x80) return false;
  if (cp == 0x85) return true;
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

bool is_alpha(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
         c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_LO;
}

bool is_decimal(char32_t cp) { return category(cp) == UTF8PROC_CATEGORY_ND; }

bool is_numeric(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

bool is_cased(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT;
}

bool is_lower(char32_t cp) { return utf8proc_islower(static_cast<utf8proc_int32_t>(cp)) != 0; }
bool is_upper(char32_t cp) { return utf8proc_isupper(static_cast<utf8proc_int32_t>(cp)) != 0; }

bool is_printable(char32_t cp) {
  if (cp == ' ') return true;
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS: return false;
    default: return true;
  }
}

bool is_word(char32_t cp) { return cp == '_' || is_alpha(cp) || is_numeric(cp); }

bool is_identifier_start(char32_t cp) {
  if (cp < 0x80) return cp == '_' || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  return is_alpha(cp) || category(cp) == UTF8PROC_CATEGORY_NL;
}

bool is_identifier_continue(char32_t cp) {
  if (cp < 0x80) return is_identifier_start(cp) || (cp >= '0' && cp <= '9');
  const auto c = category(cp);
  return is_identifier_start(cp) || c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC ||
         c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_PC;
}

char32_t to_upper(char32_t cp) { return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(cp))); }
char32_t to_lower(char32_t cp) { return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))); }
char32_t to_title(char32_t cp) { return static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(cp))); }

namespace {

void append_upper(std::string& out, char32_t cp) {
  if (cp == U'\u00DF') {  // ß has no one-letter upper case; Python gives "SS"
    out += "SS";
    return;
  }
  append_utf8(out, to_upper(cp));
}

}  // namespace

std::string upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) append_upper(out, next_code_point(s, i));
  return out;
}

std::string lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) append_utf8(out, to_lower(next_code_point(s, i)));
  return out;
}

std::string swapcase(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    if (is_upper(cp)) {
      append_utf8(out, to_lower(cp));
    } else if (is_lower(cp)) {
      append_upper(out, cp);
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

std::string casefold(std::string_view s) {
  utf8proc_uint8_t* folded = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                          static_cast<utf8proc_ssize_t>(s.size()), &folded, UTF8PROC_CASEFOLD);
  if (n < 0) return lower(s);  // cannot happen for valid UTF-8
  std::string out(reinterpret_cast<const char*>(folded), static_cast<size_t>(n));
  std::free(folded);
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out;
  size_t i = 0;
  if (i < s.size()) append_utf8(out, to_title(next_code_point(s, i)));
  while (i < s.size()) append_utf8(out, to_lower(next_code_point(s, i)));
  return out;
}

std::string title(std::string_view s) {
  // CPython: a cased letter is title-cased after an uncased character, lowered otherwise.
  std::string out;
  bool previous_is_cased = false;
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    append_utf8(out, previous_is_cased ? to_lower(cp) : to_title(cp));
    previous_is_cased = is_cased(cp);
  }
  return out;
}

}  // namespace kiln::jinja::unicode
