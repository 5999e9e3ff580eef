// Oracle: the file system after the call: atomic writes leave no temporary behind and a
// staging directory that is not committed disappears.
#include "util/file_io.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "util/error.hpp"

namespace kiln {
namespace {

std::size_t count_entries(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
}

TEST(FileIo, AtomicWriteReplacesAndLeavesNoTemporary) {
  testing::TempDir dir;
  const auto path = dir.path() / "a.txt";
  write_file_atomic(path, "first");
  write_file_atomic(path, "second");
  EXPECT_EQ(read_file(path), "second");
  EXPECT_EQ(count_entries(dir.path()), 1u);
}

TEST(FileIo, ReadMissingFileNamesIt) {
  EXPECT_KILN_ERROR(read_file("/nonexistent/kiln/file.json"), "/nonexistent/kiln/file.json");
}

TEST(FileIo, ReadingADirectorySaysSo) {
  testing::TempDir dir;
  const std::string name = dir.path().string();
  EXPECT_KILN_ERROR(read_file(dir.path()), name.c_str(), "is a directory, not a file");
}

TEST(FileIo, StagingDirectoryUnderAFileSaysTheParentIsAFile) {
  testing::TempDir dir;
  write_file_atomic(dir.path() / "file", "x");
  EXPECT_KILN_ERROR(StagingDirectory staging(dir.path() / "file" / "out"), "is not a directory");
}

TEST(FileIo, StagingDirectoryCommitRenames) {
  testing::TempDir dir;
  const auto out = dir.path() / "out";
  {
    StagingDirectory staging(out);
    write_file_atomic(staging.path() / "f", "x");
    EXPECT_FALSE(std::filesystem::exists(out));
    staging.commit();
  }
  EXPECT_EQ(read_file(out / "f"), "x");
  EXPECT_EQ(count_entries(dir.path()), 1u);
}

TEST(FileIo, StagingDirectoryWithoutCommitLeavesNothing) {
  testing::TempDir dir;
  const auto out = dir.path() / "out";
  try {
    StagingDirectory staging(out);
    write_file_atomic(staging.path() / "f", "x");
    throw std::runtime_error("export failed half-way");
  } catch (const std::runtime_error&) {}
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(count_entries(dir.path()), 0u);
}

TEST(FileIo, StagingDirectoryRefusesExistingTarget) {
  testing::TempDir dir;
  EXPECT_KILN_ERROR(StagingDirectory staging(dir.path()), "already exists");
}

}  // namespace
}  // namespace kiln
