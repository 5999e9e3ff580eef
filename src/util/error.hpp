// Throwing kiln::Error (kiln/error.hpp) with a formatted message, and the project's debug
// assertion. Inside the library bad input throws; the edges (CLI, HTTP) turn it into an exit
// code or a status with that message.
#pragma once

#include <fmt/format.h>

#include <utility>

#include "kiln/error.hpp"

namespace kiln {

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
