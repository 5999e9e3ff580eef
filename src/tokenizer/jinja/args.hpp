// Binds a call's positional and keyword arguments to named parameters, as Python does for the
// built-in functions, filters and methods, with Python-style errors for bad calls.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

class BoundArgs {
 public:
  // `params` in order; the first `required` must be given.
  BoundArgs(std::string_view function, const CallArgs& args, std::initializer_list<std::string_view> params,
            size_t required = 0);

  bool has(size_t i) const { return slots_[i] != nullptr; }
  const Value& operator[](size_t i) const { return *slots_[i]; }
  Value get(size_t i, Value fallback) const { return has(i) ? *slots_[i] : std::move(fallback); }

  // Typed reads with Python's TypeError when the value has another type.
  int64_t get_int(size_t i, int64_t fallback) const;
  bool get_bool(size_t i, bool fallback) const;  // Python truthiness
  std::string get_string(size_t i, std::string fallback) const;

 private:
  std::string function_;
  std::vector<std::string_view> names_;
  std::vector<const Value*> slots_;
};

// The value must be a str; otherwise "NAME() argument must be str, not int".
const std::string& expect_string(const Value& v, std::string_view what);

}  // namespace kiln::jinja
