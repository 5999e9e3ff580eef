// Methods of the built-in types a template may call: str (upper, split, startswith, format...),
// list and tuple (index, count), dict (get, items, keys, values). Methods that mutate are
// refused as Jinja2's ImmutableSandboxedEnvironment refuses them (SecurityError when called).
#pragma once

#include <optional>
#include <string_view>

#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

// `self.name` as a bound method; an undefined value raising SecurityError for a mutating
// method; nullopt when the type has no such method.
std::optional<Value> find_method(const Value& self, std::string_view name);

// The str methods, by name (string_methods.cpp); nullptr when str has no such method.
using MethodFn = Value (*)(Interpreter& interp, const Value& self, CallArgs& args);
MethodFn find_string_method(std::string_view name);

// Python's str.split(sep=None) and str.strip(chars=None), shared with the filters.
ValueList split_string(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right);
std::string strip_string(const std::string& s, const Value* chars, bool left, bool right);

}  // namespace kiln::jinja
