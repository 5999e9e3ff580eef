// UTF-8 and Unicode helpers for the tokenizer: decoding, repairing invalid input the way Python's
// bytes.decode("utf-8", "replace") does, and the character predicates the Rust `tokenizers` crate
// uses (char::is_whitespace, is_numeric, is_punctuation, to_lowercase, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::tok {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Length of the UTF-8 sequence that starts with `lead` (1 for a continuation or invalid byte, so
// a scan over arbitrary bytes always advances).
inline std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

// Decodes the code point at text[pos] (text must be valid UTF-8) and advances pos past it.
char32_t next_code_point(std::string_view text, std::size_t& pos);

// Appends the UTF-8 encoding of `c`.
void append_utf8(std::string& out, char32_t c);

// Length of the longest prefix of `bytes` that is well-formed UTF-8.
std::size_t valid_utf8_prefix(std::string_view bytes);

// True when the whole of `bytes` is well-formed UTF-8.
inline bool is_valid_utf8(std::string_view bytes) { return valid_utf8_prefix(bytes) == bytes.size(); }

// Appends `bytes` to `out`, replacing each maximal ill-formed subpart with U+FFFD. This is the
// Unicode "best practice" both Python (errors="replace") and Rust (from_utf8_lossy) follow, so a
// byte string repaired here equals what those languages would see.
void append_utf8_lossy(std::string& out, std::string_view bytes);

// Length of a trailing incomplete (but so far well-formed) UTF-8 sequence in `bytes`: the bytes a
// streaming decoder must hold back until more input arrives. 0 when `bytes` ends on a boundary.
std::size_t incomplete_utf8_suffix(std::string_view bytes);

// The predicates below answer as HF `tokenizers` does. They read utf8proc's tables, corrected by
// hf_unicode_exceptions.inc where HF's (older or newer) tables disagree, measured per code point
// by tools/tokenizer/extract_unicode_exceptions.py.

// Rust's char::is_whitespace: the Unicode White_Space property (25 code points).
bool is_white_space(char32_t c);
// Rust's char::is_numeric (the Digits pre-tokenizer): general category Nd, Nl or No.
bool is_numeric(char32_t c);
// The Punctuation and BertPreTokenizer test: general category P* or ASCII punctuation.
bool is_punctuation_or_ascii_punctuation(char32_t c);
// StripAccents: general category Mn, Mc or Me.
bool is_combining_mark(char32_t c);
// BertNormalizer strip_accents: general category Mn.
bool is_bert_accent_mark(char32_t c);
// BertNormalizer clean_text's control test: general category Cc, Cf, Co or Cs.
bool is_bert_control(char32_t c);
// Code points HF's normalization tables do not know: NFC/NFD/NFKC/NFKD leave them alone and do
// not reorder or compose across them.
bool is_normalization_opaque(char32_t c);
// Rust regex \w: Alphabetic, Mark, Nd, Pc or Join_Control.
bool is_rust_word_char(char32_t c);

// Rust's char::to_lowercase, appended as UTF-8 (one code point except U+0130 -> "i\u0307").
void append_lowercase(std::string& out, char32_t c);

}  // namespace kiln::tok
