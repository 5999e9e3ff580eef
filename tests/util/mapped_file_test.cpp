// Oracle: the mapped bytes equal the file's bytes; errors name the path.
#include "util/mapped_file.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>

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

// Another program truncating a mapped model file: the next read past the new end is SIGBUS.
// The process still ends by SIGBUS, but says which file changed.
TEST(MappedFileDeathTest, TruncationUnderTheMapIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  testing::TempDir dir;
  const auto path = dir.path() / "model.bin";
  write_file_atomic(path, std::string(1 << 20, 'w'));
  EXPECT_EXIT(
      {
        MappedFile m(path);
        std::filesystem::resize_file(path, 0);
        volatile std::uint8_t sink = m.data()[m.size() / 2];
        (void)sink;
      },
      ::testing::KilledBySignal(SIGBUS), "model.bin: the file changed size while kiln was reading it");
}

// A fault outside kiln's mappings is left to the handler before kiln's (here the default).
TEST(MappedFileDeathTest, OtherBusErrorsKeepTheirHandler) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  testing::TempDir dir;
  write_file_atomic(dir.path() / "f", "x");
  EXPECT_EXIT(
      {
        MappedFile m(dir.path() / "f");  // installs kiln's handler
        raise(SIGBUS);
      },
      ::testing::KilledBySignal(SIGBUS), "^$");
}

}  // namespace
}  // namespace kiln
