// Asking the file system what is at a path. std::filesystem's throwing queries report a name that
// is too long, or a folder without search permission, as a filesystem_error, which reads as a bug
// in kiln; these fail with a kiln::Error naming the path and the system's reason instead.
#pragma once

#include <filesystem>

namespace kiln {

// What is at `path`, symbolic links followed: file_type::not_found when nothing is (a missing
// parent, or a parent that is a file, included). Throws kiln::Error (kIo) when the system cannot say.
std::filesystem::file_type path_type(const std::filesystem::path& path);

inline bool path_exists(const std::filesystem::path& path) {
  return path_type(path) != std::filesystem::file_type::not_found;
}
inline bool is_file_path(const std::filesystem::path& path) {
  return path_type(path) == std::filesystem::file_type::regular;
}
inline bool is_directory_path(const std::filesystem::path& path) {
  return path_type(path) == std::filesystem::file_type::directory;
}

}  // namespace kiln
