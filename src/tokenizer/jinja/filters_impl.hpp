// Shared between the two filter files: the sequence-filter table and markupsafe's soft_str.
#pragma once

#include <string_view>
#include <unordered_map>

#include "tokenizer/jinja/filters.hpp"

namespace kiln::jinja {

// Strings (Markup included) unchanged; anything else as str(value).
Value soft_str(const Value& v);

// length, first, last, join, map, select, selectattr, sort, unique, ... (filters_sequence.cpp).
const std::unordered_map<std::string_view, FilterFn>& sequence_filters();

}  // namespace kiln::jinja
