// kiln's one exception type. Every public call that cannot do what it was asked throws
// kiln::Error with the context a user needs (the file, tensor, field, value or limit, and what is
// accepted); kind() tells an edge how to map it (an exit code, an HTTP status).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "kiln/api.hpp"

namespace kiln {

enum class ErrorKind {
  kInvalidInput,  // malformed file, bad argument, out-of-range value
  kNotFound,      // a file, tensor or name that does not exist
  kUnsupported,   // a valid input kiln does not handle (architecture, dtype, component)
  kIo,            // the operating system refused (open, read, write, mmap)
  kInternal,      // a broken invariant: a bug in kiln
};

class KILN_API Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  explicit Error(std::string message) : Error(ErrorKind::kInvalidInput, std::move(message)) {}

  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace kiln
