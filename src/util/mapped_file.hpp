// A read-only memory map of a whole file. Weights are served from the map, never copied whole
// into RAM; the map lives as long as the MappedFile (move-only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace kiln {

class MappedFile {
 public:
  // Maps `path` read-only. Throws kiln::Error naming the file if it cannot be opened or mapped.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void release();

  std::filesystem::path path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// Drops the whole pages inside `bytes` from this process's page tables (MADV_DONTNEED), so they
// leave its resident set. Only for bytes of a private read-only *file* mapping, where a later
// read simply faults the page back in from the file; on anonymous memory it would zero the data.
void release_file_pages(std::span<const std::uint8_t> bytes);

}  // namespace kiln
