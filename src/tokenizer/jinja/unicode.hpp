// UTF-8 code-point helpers and Python's character classes (str.isspace, str.upper, ...), so
// string operations in templates count and transform code points as Python does.
// Invariant: every string inside the engine is valid UTF-8 (checked where text enters).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/utf8.hpp"

namespace kiln::jinja::unicode {

// UTF-8 <-> code points (single code points: next_code_point / append_utf8 in util/utf8.hpp).
std::u32string decode(std::string_view s);
std::string encode(std::u32string_view s);

// Number of code points (Python's len(str)).
size_t length(std::string_view s);

// True when `s` is well-formed UTF-8 (no surrogates, no overlongs); else sets *error_offset.
bool is_valid(std::string_view s, size_t* error_offset);

bool is_space(char32_t cp);    // str.isspace
bool is_alpha(char32_t cp);    // str.isalpha: letters (L*)
bool is_decimal(char32_t cp);  // str.isdecimal: Nd
bool is_numeric(char32_t cp);  // str.isnumeric: Nd, Nl, No
bool is_cased(char32_t cp);    // Lu, Ll, Lt
bool is_lower(char32_t cp);
bool is_upper(char32_t cp);
bool is_printable(char32_t cp);  // str.isprintable, which repr() uses to choose escapes
bool is_word(char32_t cp);       // regex \w: alphanumeric or underscore
bool is_identifier_start(char32_t cp);
bool is_identifier_continue(char32_t cp);

char32_t to_upper(char32_t cp);
char32_t to_lower(char32_t cp);
char32_t to_title(char32_t cp);

std::string upper(std::string_view s);  // str.upper (simple mappings, plus ß -> SS)
std::string lower(std::string_view s);
std::string swapcase(std::string_view s);
std::string casefold(std::string_view s);    // str.casefold: full folding (ß -> ss)
std::string capitalize(std::string_view s);  // first code point title-cased, rest lowered
std::string title(std::string_view s);       // str.title

}  // namespace kiln::jinja::unicode
