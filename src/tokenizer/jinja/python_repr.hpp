// Python's str() and repr() of template values, byte-for-byte: "{{ x }}" prints str(x), and a
// container prints the repr of its items ("['a', 1.0, None]"). Floats use Python's shortest
// round-trip repr ("1e+16", "0.30000000000000004").
#pragma once

#include <string>
#include <string_view>

#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

std::string python_str(const Value& v);
std::string python_repr(const Value& v);
std::string repr_string(std::string_view s);  // 'it''s' -> "it's"
std::string repr_float(double d);
void append_str(std::string& out, const Value& v);

}  // namespace kiln::jinja
