// The character predicates the Rust `tokenizers` crate uses (char::is_whitespace, is_numeric,
// is_punctuation, to_lowercase, ...); UTF-8 coding itself is util/utf8.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/utf8.hpp"

namespace kiln::tok {

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
