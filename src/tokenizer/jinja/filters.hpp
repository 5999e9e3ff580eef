// Jinja2's built-in filters (jinja2/filters.py) plus transformers' tojson, by name.
// A filter gets the value left of the pipe and the call's arguments.
#pragma once

#include <string_view>

#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

using FilterFn = Value (*)(Interpreter& interp, const Value& input, CallArgs& args);

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

// nullptr when there is no such filter.
const FilterEntry* find_filter(std::string_view name);

}  // namespace kiln::jinja
