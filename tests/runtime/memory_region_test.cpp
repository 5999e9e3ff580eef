// Oracles: handing back the pages of a read-only file mapping (after a lookup, or with the 2 MiB
// windows around rows) never changes what the mapping reads — the bytes equal the file's, which
// the test wrote itself — and advice on a mapping is only advice (same bytes after it).
#include "runtime/cpu/memory_region.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "support/test_support.hpp"
#include "util/mapped_file.hpp"

namespace kiln::runtime {
namespace {

std::uint8_t pattern(std::size_t i) { return static_cast<std::uint8_t>((i * 131 + (i >> 12)) & 0xFF); }

TEST(MemoryRegion, ReleasedFilePagesReadBackTheFileBytes) {
  testing::TempDir dir;
  const std::filesystem::path file = dir.path() / "table.bin";
  constexpr std::size_t kBytes = (std::size_t{6} << 20) + 1234;  // three 2 MiB windows and a tail
  {
    std::vector<std::uint8_t> bytes(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) bytes[i] = pattern(i);
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), kBytes);
  }
  const MappedFile mapped(file);
  advise_huge_pages(mapped.bytes());
  // A "table" starting at an odd offset, rows of 2 KiB, as an embedding inside model.bin lies.
  const std::span<const std::uint8_t> table = mapped.bytes().subspan(777, kBytes - 1000);
  constexpr std::size_t kRow = 2048;
  std::uint64_t sum = 0;
  const std::size_t rows[] = {0, 1, 1500, 1024, 2047, (kBytes - 1000) / kRow - 1};
  for (std::size_t row : rows) {
    const std::span<const std::uint8_t> r = table.subspan(row * kRow, kRow);
    for (std::uint8_t b : r) sum += b;  // touch it, as a lookup does
    release_file_pages_around(r, table);
    for (std::size_t i = 0; i < kRow; ++i) ASSERT_EQ(r[i], pattern(777 + row * kRow + i)) << "row " << row;
  }
  EXPECT_GT(sum, 0u);
  release_file_pages(mapped.bytes());
  for (std::size_t i = 0; i < kBytes; ++i) ASSERT_EQ(mapped.data()[i], pattern(i)) << "byte " << i;
}

}  // namespace
}  // namespace kiln::runtime
