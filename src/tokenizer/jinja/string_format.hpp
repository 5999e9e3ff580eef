// Python's string formatting as templates use it: printf-style `"%s" % x` (and the `format`
// filter), `str.format`, the format-spec mini-language, and markupsafe's HTML escaping.
#pragma once

#include <string>
#include <string_view>

#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

// markupsafe.escape: & < > ' " become entities.
std::string html_escape(std::string_view s);

// `format % args`: a tuple supplies positional values, a dict named ones.
std::string percent_format(Interpreter& interp, std::string_view format, const Value& args);

// `format.format(*args, **kwargs)`, with attribute and index lookups sandboxed.
std::string brace_format(Interpreter& interp, std::string_view format, const CallArgs& args);

// format(value, spec), Python's __format__ for str, int, float and bool.
std::string format_value(const Value& value, std::string_view spec);

}  // namespace kiln::jinja
