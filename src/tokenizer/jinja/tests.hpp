// Jinja2's built-in tests (jinja2/tests.py): `x is defined`, `x is divisibleby 3`, ...
#pragma once

#include <string_view>

#include "tokenizer/jinja/value.hpp"

namespace kiln::jinja {

using TestFn = bool (*)(Interpreter& interp, const Value& input, CallArgs& args);

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

// nullptr when there is no such test.
const TestEntry* find_test(std::string_view name);

}  // namespace kiln::jinja
