#include "runtime/cpu/memory_region.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "util/error.hpp"
#include "util/mapped_file.hpp"

namespace kiln::runtime {

AnonymousMemory::AnonymousMemory(std::size_t bytes, bool huge_pages) : size_(bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail(ErrorKind::kIo, "cannot map {} bytes of memory: {}", bytes, std::strerror(errno));
  if (huge_pages) ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
  data_ = static_cast<std::uint8_t*>(p);
}

AnonymousMemory::~AnonymousMemory() {
  if (data_) ::munmap(data_, size_);
}

AnonymousMemory::AnonymousMemory(AnonymousMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

AnonymousMemory& AnonymousMemory::operator=(AnonymousMemory&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

namespace {

// madvise over the whole pages that hold `bytes`; advice only, so a failure is harmless.
void advise(std::span<const std::uint8_t> bytes, int advice) {
  if (bytes.empty()) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(bytes.data()) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size();
  ::madvise(reinterpret_cast<void*>(begin), end - begin, advice);
}

}  // namespace

void advise_huge_pages(std::span<const std::uint8_t> bytes) { advise(bytes, MADV_HUGEPAGE); }

void release_file_pages_around(std::span<const std::uint8_t> rows, std::span<const std::uint8_t> table) {
  constexpr std::uintptr_t kWindow = std::uintptr_t{2} << 20;
  const auto table_begin = reinterpret_cast<std::uintptr_t>(table.data());
  const auto table_end = table_begin + table.size();
  const auto begin = std::max(reinterpret_cast<std::uintptr_t>(rows.data()) / kWindow * kWindow, table_begin);
  const auto end = std::min(
      (reinterpret_cast<std::uintptr_t>(rows.data()) + rows.size() + kWindow - 1) / kWindow * kWindow, table_end);
  if (end > begin) release_file_pages({table.data() + (begin - table_begin), end - begin});
}

}  // namespace kiln::runtime
