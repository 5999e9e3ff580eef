// Page-granular memory for the compiled CPU model: anonymous regions (packed weights without a
// compile cache, the KV cache), which cost no resident memory until touched, and a way to hand
// back the pages of a read-only file mapping once its bytes have been repacked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln::runtime {

class AnonymousMemory {
 public:
  AnonymousMemory() = default;
  // Zero-filled, page-aligned. huge_pages asks for transparent huge pages (fewer TLB misses when
  // decode streams every weight); the kernel may decline. Throws kiln::Error (kIo) on failure.
  AnonymousMemory(std::size_t bytes, bool huge_pages);
  ~AnonymousMemory();
  AnonymousMemory(AnonymousMemory&& other) noexcept;
  AnonymousMemory& operator=(AnonymousMemory&& other) noexcept;
  AnonymousMemory(const AnonymousMemory&) = delete;
  AnonymousMemory& operator=(const AnonymousMemory&) = delete;

  std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// Asks for transparent huge pages on a file mapping (MADV_HUGEPAGE) before it is first touched.
// With large page-cache folios (ext4, XFS on recent kernels) a read then maps 2 MiB per page-table
// entry instead of 4 KiB: mapping a 730 MiB compile-cache entry drops from ~150 ms to ~15 ms and
// decode's TLB misses with it. A written mapping so advised also creates such folios. Advice
// only: a kernel that declines keeps 4 KiB pages, and the bytes read are the same.
void advise_huge_pages(std::span<const std::uint8_t> bytes);

// release_file_pages (util/mapped_file.hpp) for the 2 MiB-aligned windows around `rows` (clipped to `table`): whatever
// a read of those rows mapped, 4 KiB fault-around pages or a 2 MiB folio, leaves the page tables again. For a
// file-mapped table read a row at a time (the token embedding), so RSS keeps none of it.
void release_file_pages_around(std::span<const std::uint8_t> rows, std::span<const std::uint8_t> table);

}  // namespace kiln::runtime
