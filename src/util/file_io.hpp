// Reading whole text files and writing outputs atomically: every output is written under a
// temporary name and renamed into place, so an error or Ctrl-C never leaves a half-written file
// or directory behind.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kiln {

// Reads a whole file. Throws kiln::Error naming the file when it is missing or unreadable.
std::string read_file(const std::filesystem::path& path);

// Writes `contents` to `path` through a temporary file in the same directory and a rename.
void write_file_atomic(const std::filesystem::path& path, std::string_view contents);

// A directory being built under a temporary sibling name (`.OUT.partial-XXXXXX`). commit()
// renames it to its final name (replacing nothing: the target must not exist); destruction
// without commit() removes it, so a failed export leaves nothing behind.
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
  bool committed_ = false;
};

}  // namespace kiln
