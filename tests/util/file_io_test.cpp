// Oracle: the file system after the call: atomic writes leave no temporary behind and a
// staging directory that is not committed disappears.
#include "util/file_io.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

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

// A child process stands for an export killed half-way: it ends without running destructors,
// so its staging directory and lock file stay behind, the lock released by the kernel.
TEST(FileIo, StagingDirectoryOfAKilledRunIsRemovedByTheNext) {
  testing::TempDir dir;
  const auto out = dir.path() / "out";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StagingDirectory staging(out);
    write_file_atomic(staging.path() / "model.bin", "half");
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(count_entries(dir.path()), 2u) << "the killed run's directory and its lock";
  {
    StagingDirectory next(out);
    EXPECT_EQ(count_entries(dir.path()), 2u) << "the old pair replaced by this run's";
    EXPECT_TRUE(std::filesystem::is_empty(next.path()));
  }
  EXPECT_EQ(count_entries(dir.path()), 0u);
}

TEST(FileIo, StagingDirectoryOfALiveRunIsLeftAlone) {
  testing::TempDir dir;
  const auto out = dir.path() / "out";
  StagingDirectory first(out);
  write_file_atomic(first.path() / "f", "x");
  {
    StagingDirectory second(out);
    EXPECT_EQ(count_entries(dir.path()), 4u);
  }
  EXPECT_EQ(read_file(first.path() / "f"), "x");
}

TEST(FileIo, StagingDirectoryWithoutALockIsNamedNotRemoved) {
  testing::TempDir dir;
  const auto legacy = dir.path() / ".out.partial-abcdefgh";
  std::filesystem::create_directory(legacy);
  { StagingDirectory staging(dir.path() / "out"); }
  EXPECT_TRUE(std::filesystem::exists(legacy));
}

TEST(FileIo, StagingDirectoryRefusesExistingTarget) {
  testing::TempDir dir;
  EXPECT_KILN_ERROR(StagingDirectory staging(dir.path()), "already exists");
}

}  // namespace
}  // namespace kiln
