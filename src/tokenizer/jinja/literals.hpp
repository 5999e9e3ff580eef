// Number and string literals inside template tags, read as Jinja2 reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::jinja {

// Throws a TemplateSyntaxError at `offset`.
[[noreturn]] void syntax_error(size_t offset, std::string message);

// Jinja's float_re / integer_re at `pos`: the end of the literal, or npos when there is none.
// match_integer also reports the base (2, 8, 10 or 16) from the 0b/0o/0x prefix.
size_t match_float(std::string_view s, size_t pos);
size_t match_integer(std::string_view s, size_t pos, int& base);

// The value of a matched literal; integers beyond 64 bits are a LimitError at `offset`.
int64_t parse_integer(std::string_view text, int base, size_t offset);
double parse_float(std::string_view text);

// The body of a quoted string with Python's escapes decoded (\n, \x41, \u00e9, octal, ...).
std::string decode_string_literal(std::string_view body, size_t offset);

}  // namespace kiln::jinja
