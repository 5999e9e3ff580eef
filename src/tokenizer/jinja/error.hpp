// Errors of the Jinja engine. Inside the engine a failure is a jinja::Exception carrying the
// Python exception type Jinja2 would raise and its message; the public entry points (Template)
// turn it into a TemplateError, a kiln::Error whose message also names the line and column.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "util/error.hpp"

namespace kiln::jinja {

// The Python exception class Jinja2 (inside transformers' sandbox) raises for the same failure,
// so an error reads the same as `apply_chat_template` reports it.
enum class ErrorType : uint8_t {
  kTemplateSyntaxError,
  kTemplateAssertionError,
  kTemplateError,  // raise_exception(msg) from the template itself
  kTemplateRuntimeError,
  kUndefinedError,
  kSecurityError,  // the sandbox refused (e.g. list.append)
  kTypeError,
  kValueError,
  kZeroDivisionError,
  kOverflowError,
  kKeyError,
  kIndexError,
  kFilterArgumentError,
  kRecursionError,
  kLimitError,  // kiln's own bounds: output size, steps, integer range
};

std::string_view error_type_name(ErrorType type);

inline constexpr uint32_t kNoOffset = UINT32_MAX;

// Thrown inside the engine; `offset` is the byte offset in the template source of the node that
// failed, filled in by the innermost node that sees the exception pass.
struct Exception {
  ErrorType type;
  std::string message;
  uint32_t offset = kNoOffset;
};

template <typename... Args>
[[noreturn]] void raise(ErrorType type, fmt::format_string<Args...> format, Args&&... args) {
  throw Exception{type, fmt::format(format, std::forward<Args>(args)...)};
}

// What a caller of the engine sees: "NAME:LINE:COLUMN: TypeError: 'NoneType' object is not
// iterable". `python_message()` is the part Python would print ("TypeError: ...").
class TemplateError : public Error {
 public:
  TemplateError(ErrorType type, std::string detail, std::string source_name, int line, int column);

  ErrorType type() const { return type_; }
  const std::string& detail() const { return detail_; }
  int line() const { return line_; }
  int column() const { return column_; }
  std::string python_message() const;

 private:
  ErrorType type_;
  std::string detail_;
  int line_;
  int column_;
};

}  // namespace kiln::jinja
