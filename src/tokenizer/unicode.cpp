// Character predicates over utf8proc's Unicode tables (the Rust crate's own tables may be a newer Unicode version; code
// points assigned since then can classify differently).
#include "tokenizer/unicode.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include <algorithm>
#include <span>
#include <utility>

namespace kiln::tok {
namespace {

struct CodePointRange {
  char32_t first, last;
};

#include "tokenizer/hf_unicode_exceptions.inc"

bool in_ranges(std::span<const CodePointRange> ranges, char32_t c) {
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                                   [](char32_t value, const CodePointRange& r) { return value < r.first; });
  return it != ranges.begin() && c <= std::prev(it)->last;
}

// White_Space code points besides U+0009..U+000D and U+2000..U+200A.
bool is_sparse_white_space(char32_t c) {
  switch (c) {
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: return true;
    default: return false;
  }
}

utf8proc_category_t category(char32_t c) {
  return static_cast<utf8proc_category_t>(utf8proc_category(static_cast<utf8proc_int32_t>(c)));
}

}  // namespace

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x2000 && c <= 0x200A) || is_sparse_white_space(c);
}

bool is_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  const auto cat = category(c);
  const bool numeric = cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
  return numeric != in_ranges(kNumericFlips, c);
}

bool is_punctuation_or_ascii_punctuation(char32_t c) {
  if (c < 0x80)
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  const auto cat = category(c);
  return (cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO) != in_ranges(kPunctuationFlips, c);
}

bool is_combining_mark(char32_t c) {
  const auto cat = category(c);
  const bool mark = cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC || cat == UTF8PROC_CATEGORY_ME;
  return mark != in_ranges(kCombiningMarkFlips, c);
}

bool is_bert_accent_mark(char32_t c) { return (category(c) == UTF8PROC_CATEGORY_MN) != in_ranges(kBertMarkFlips, c); }

bool is_bert_control(char32_t c) {
  const auto cat = category(c);
  const bool control = cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_CO ||
                       cat == UTF8PROC_CATEGORY_CS;
  return control != in_ranges(kBertControlFlips, c);
}

bool is_normalization_opaque(char32_t c) { return in_ranges(kNormalizationOpaque, c); }

bool is_rust_word_char(char32_t c) {
  // NOTE: utf8proc has no Alphabetic property; PCRE2 has, so this one-character class is
  // matched with a compiled PCRE2 pattern. Only single_word added tokens use it.
  static pcre2_code* const kWordClass = [] {
    static const char kPattern[] = "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
    int error = 0;
    PCRE2_SIZE offset = 0;
    return pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &error,
                         &offset, nullptr);
  }();
  std::string encoded;
  append_utf8(encoded, c);
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  const int rc = pcre2_match(kWordClass, reinterpret_cast<PCRE2_SPTR>(encoded.data()), encoded.size(), 0,
                             PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, data, nullptr);
  pcre2_match_data_free(data);
  return rc > 0;
}

void append_lowercase(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
    return;
  }
  if (c == 0x130) {  // the one unconditional multi-character lowercase mapping
    out += "i\xCC\x87";
    return;
  }
  const auto* override_end = std::end(kLowercaseOverrides);
  const auto* it = std::lower_bound(std::begin(kLowercaseOverrides), override_end, c,
                                    [](const auto& entry, char32_t value) { return entry.first < value; });
  if (it != override_end && it->first == c) return append_utf8(out, it->second);
  append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
}

}  // namespace kiln::tok
