// An advisory lock (flock) on a file, held while the object lives. The kernel drops it when the
// holder's process ends, however it ends (SIGKILL, a power cut of the process), so a lock that
// can be taken says its holder is gone: how the next run tells an abandoned work-in-progress
// from one still being written.
#pragma once

#include <filesystem>

namespace kiln {

class ProcessLock {
 public:
  // Creates the file if needed and locks it; throws kiln::Error (kIo) naming it.
  explicit ProcessLock(std::filesystem::path path);
  ~ProcessLock();  // removes the file, then releases the lock
  ProcessLock(const ProcessLock&) = delete;
  ProcessLock& operator=(const ProcessLock&) = delete;

  // Whether a live process holds the lock on `path` (false when there is no such file).
  static bool held(const std::filesystem::path& path);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace kiln
