// kiln's one exception type. Inside the library bad input throws kiln::Error carrying the
// context a user needs (file, tensor, field, value, what is accepted); the edges (CLI, HTTP)
// turn it into an exit code or a status with that message.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace kiln {

// What went wrong, so an edge can map it: the CLI to an exit code, the server to an HTTP status.
enum class ErrorKind {
  kInvalidInput,  // malformed file, bad argument, out-of-range value
  kNotFound,      // a file, tensor or name that does not exist
  kUnsupported,   // a valid input kiln does not handle (architecture, dtype, component)
  kIo,            // the operating system refused (open, read, write, mmap)
  kInternal,      // a broken invariant: a bug in kiln
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  explicit Error(std::string message) : Error(ErrorKind::kInvalidInput, std::move(message)) {}

  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// Throws kiln::Error(kind, fmt::format(...)).
template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

// Throws an invalid-input kiln::Error.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ErrorKind::kInvalidInput, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace kiln

// The project's one assertion macro: checks an internal invariant in debug builds only.
// Never use it for user input; that gets kiln::fail with a message.
#ifdef NDEBUG
#define KILN_DASSERT(cond) ((void)0)
#else
#define KILN_DASSERT(cond)                                    \
  ((cond) ? (void)0                                           \
          : throw ::kiln::Error(::kiln::ErrorKind::kInternal, \
                                ::fmt::format("internal check failed: {} at {}:{}", #cond, __FILE__, __LINE__)))
#endif
