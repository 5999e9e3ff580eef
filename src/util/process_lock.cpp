#include "util/process_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "util/error.hpp"

namespace kiln {

ProcessLock::ProcessLock(std::filesystem::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(ErrorKind::kIo, "{}: cannot create: {}", path_.string(), std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd_);
    fail(ErrorKind::kIo, "{}: cannot lock: {}", path_.string(), std::strerror(error));
  }
}

ProcessLock::~ProcessLock() {
  // Removed while still locked, so no other process can take a lock on a file about to vanish
  // and mistake this live holder for a gone one.
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
  ::close(fd_);
}

bool ProcessLock::held(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool taken = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);  // releases it again when taken
  return !taken;
}

}  // namespace kiln
