#include "util/path_probe.hpp"

#include <system_error>

#include "util/error.hpp"

namespace kiln {

std::filesystem::file_type path_type(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  // status() reports a missing path as not_found with ec set; any other error is the system's.
  if (ec && status.type() != std::filesystem::file_type::not_found) {
    fail(ErrorKind::kIo, "{}: cannot be looked up: {}", path.string(), ec.message());
  }
  return status.type();
}

}  // namespace kiln
