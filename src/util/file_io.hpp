// Reading whole text files and writing outputs atomically: every output is written under a
// temporary name and renamed into place, so an error or Ctrl-C never leaves a half-written file
// or directory behind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "util/process_lock.hpp"

namespace kiln {

// Reads a whole file. Throws kiln::Error naming the file when it is missing or unreadable.
std::string read_file(const std::filesystem::path& path);

// Writes `contents` to `path` through a temporary file in the same directory and a rename.
void write_file_atomic(const std::filesystem::path& path, std::string_view contents);

// A file written in pieces under a temporary name; commit() flushes and renames it into place,
// destruction without commit() removes the temporary. For outputs too large to build in memory.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::string_view bytes);
  std::uint64_t bytes_written() const { return bytes_written_; }
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_path_;
  std::ofstream out_;
  std::uint64_t bytes_written_ = 0;
  bool committed_ = false;
};

// A directory being built under a temporary sibling name (`.OUT.partial-XXXXXXXX`). commit()
// renames it to its final name (replacing nothing: the target must not exist); destruction
// without commit() removes it, so a failed export leaves nothing behind. A process killed
// before either leaves the directory; its lock file beside it (`.OUT.partial-XXXXXXXX.lock`,
// a ProcessLock) lets the next StagingDirectory for OUT find it abandoned and remove it.
class StagingDirectory {
 public:
  explicit StagingDirectory(std::filesystem::path final_path);
  ~StagingDirectory();
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;

  const std::filesystem::path& path() const { return staging_path_; }
  void commit();

 private:
  std::filesystem::path final_path_;
  std::filesystem::path staging_path_;
  std::optional<ProcessLock> lock_;
  bool committed_ = false;
};

}  // namespace kiln
