// Oracle: llama.cpp's own gguf package. tests/data/gguf/tiny.gguf was written by its GGUFWriter
// and golden.json is what its GGUFReader reads back (tools/make_gguf_fixtures.py): every key and
// value in order, and every tensor's type, dimensions, size and bytes must be the same here.
// Broken copies of the file (every truncation, a bad magic or version, a tensor count that lies,
// a tensor past the end) must be refused with a kiln::Error, never a crash.
#include "ir/gguf_file.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "support/test_support.hpp"
#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace kiln::ir {
namespace {

std::filesystem::path fixture() { return testing::test_data_dir() / "gguf" / "tiny.gguf"; }

TEST(GgufFile, ReadsWhatLlamaCppsReaderReads) {
  const GgufFile file(fixture());
  const Json golden = read_json_file(testing::test_data_dir() / "gguf" / "golden.json");
  EXPECT_EQ(file.version(), golden["version"].get<std::uint32_t>());
  EXPECT_EQ(file.alignment(), golden["alignment"].get<std::uint64_t>());
  ASSERT_EQ(file.metadata().size(), golden["metadata"].size());
  for (std::size_t i = 0; i < file.metadata().size(); ++i) {
    const Json& want = golden["metadata"][i];
    EXPECT_EQ(file.metadata()[i].first, want["key"].get<std::string>());
    EXPECT_EQ(file.metadata()[i].second, want["value"]) << file.metadata()[i].first;
  }
  ASSERT_EQ(file.tensors().size(), golden["tensors"].size());
  for (std::size_t i = 0; i < file.tensors().size(); ++i) {
    const GgufTensor& t = file.tensors()[i];
    const Json& want = golden["tensors"][i];
    EXPECT_EQ(t.name, want["name"].get<std::string>());
    EXPECT_EQ(ggml_type_name(static_cast<std::uint32_t>(t.type)), want["type"].get<std::string>()) << t.name;
    EXPECT_EQ(t.dims, want["dims"].get<std::vector<std::uint64_t>>()) << t.name;
    EXPECT_EQ(t.bytes.size(), want["bytes"].get<std::size_t>()) << t.name;
    EXPECT_EQ(sha256_hex(t.bytes), want["sha256"].get<std::string>()) << t.name;
  }
  ASSERT_NE(file.find("llama.context_length"), nullptr);
  EXPECT_EQ(*file.find("llama.context_length"), 256);
  EXPECT_EQ(file.find("no.such.key"), nullptr);
}

class BrokenGguf : public ::testing::Test {
 protected:
  std::string bytes = read_file(fixture());
  testing::TempDir dir;
  std::filesystem::path write(const std::string& content) {
    const auto path = dir.path() / "broken.gguf";
    write_file_atomic(path, content);
    return path;
  }
  std::string with_u64(std::size_t offset, std::uint64_t value) const {
    std::string copy = bytes;
    std::memcpy(copy.data() + offset, &value, sizeof value);
    return copy;
  }
};

TEST_F(BrokenGguf, EveryTruncationIsAnErrorOrCutsOnlyPadding) {
  // The writer pads the last tensor to the alignment: cutting only padding loses nothing.
  const GgufFile whole(fixture());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const auto path = write(bytes.substr(0, size));
    try {
      const GgufFile cut(path);
      EXPECT_GE(size + whole.alignment(), bytes.size()) << "truncated to " << size << " bytes and still read";
      for (std::size_t i = 0; i < cut.tensors().size(); ++i) {
        EXPECT_EQ(sha256_hex(cut.tensors()[i].bytes), sha256_hex(whole.tensors()[i].bytes));
      }
    } catch (const Error&) {}
  }
}

TEST_F(BrokenGguf, HeaderLiesAreNamed) {
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_KILN_ERROR(GgufFile(write(magic)), "not a GGUF file");
  std::string version = bytes;
  version[4] = 1;
  EXPECT_KILN_ERROR(GgufFile(write(version)), "GGUF version 1");
  EXPECT_KILN_ERROR(GgufFile(write(with_u64(8, std::uint64_t(1) << 40))),
                    "tensor count");  // header: magic, version, tensors
  EXPECT_KILN_ERROR(GgufFile(write(with_u64(16, std::uint64_t(1) << 40))), "metadata count");
}

// A string that is not UTF-8 (found by gguf_fuzz: a token's bytes went into the rebuilt
// tokenizer.json, whose writer threw a JSON library error that ended the process).
TEST_F(BrokenGguf, AStringThatIsNotUtf8IsNamed) {
  const std::string key = "general.architecture";
  const std::size_t at = bytes.find(key);
  ASSERT_NE(at, std::string::npos);
  std::string bad = bytes;
  const std::size_t value = at + key.size() + 4 + 8;  // past the value type and the string's length
  ASSERT_EQ(bad.substr(value, 5), "llama");
  bad[value + 2] = '\xff';
  EXPECT_KILN_ERROR(GgufFile(write(bad)), "metadata 'general.architecture'", "not valid UTF-8", "0xff");
}

TEST_F(BrokenGguf, ATensorPastTheEndIsNamed) {
  // The last tensor's data (210 bytes) ends the file, before at most 31 bytes of padding.
  EXPECT_KILN_ERROR(GgufFile(write(bytes.substr(0, bytes.size() - 40))), "q6_k");
}

}  // namespace
}  // namespace kiln::ir
