// Oracle: the mapped bytes equal the file's bytes; errors name the path.
#include "util/mapped_file.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "util/file_io.hpp"

namespace kiln {
namespace {

TEST(MappedFile, MapsBytes) {
  testing::TempDir dir;
  write_file_atomic(dir.path() / "f", "hello");
  MappedFile m(dir.path() / "f");
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m.data()), m.size()), "hello");
  MappedFile moved = std::move(m);
  EXPECT_EQ(moved.size(), 5u);
  EXPECT_EQ(m.size(), 0u);
}

TEST(MappedFile, EmptyFile) {
  testing::TempDir dir;
  write_file_atomic(dir.path() / "empty", "");
  MappedFile m(dir.path() / "empty");
  EXPECT_EQ(m.size(), 0u);
}

TEST(MappedFile, ErrorsNamePath) {
  testing::TempDir dir;
  EXPECT_KILN_ERROR(MappedFile(dir.path() / "nope.safetensors"), "nope.safetensors", "cannot open");
  EXPECT_KILN_ERROR(MappedFile{dir.path()}, "is a directory");
}

}  // namespace
}  // namespace kiln
