// Oracle: hand-built files. Valid ones read back byte for byte; each kind of corruption is
// rejected with a message naming the file and the offending tensor.
#include "ir/safetensors.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "support/test_support.hpp"
#include "util/file_io.hpp"

namespace kiln::ir {
namespace {

// A raw safetensors file: 8-byte length, the header text as given, then `data`.
std::filesystem::path write_raw(const testing::TempDir& dir, const std::string& header, const std::string& data,
                                std::optional<std::uint64_t> declared_length = std::nullopt) {
  const std::uint64_t length = declared_length.value_or(header.size());
  std::string bytes(reinterpret_cast<const char*>(&length), 8);
  bytes += header + data;
  const auto path = dir.path() / "model.safetensors";
  write_file_atomic(path, bytes);
  return path;
}

TEST(Safetensors, WriteThenReadRoundTrips) {
  testing::TempDir dir;
  const std::vector<float> a{1.5f, -2.0f, 3.25f, 0.0f, 8.0f, 9.0f};
  const std::vector<std::uint16_t> b{0x3c00, 0xc000};
  write_safetensors(dir.path() / "m.safetensors",
                    {{"a", ElementType::kF32, {2, 3}, {reinterpret_cast<const std::uint8_t*>(a.data()), 24}},
                     {"b", ElementType::kF16, {2}, {reinterpret_cast<const std::uint8_t*>(b.data()), 4}}},
                    {{"format", "pt"}});
  SafetensorsFile f(dir.path() / "m.safetensors");
  ASSERT_EQ(f.tensors().size(), 2u);
  const TensorView& ta = f.tensors().at("a");
  EXPECT_EQ(ta.dtype, ElementType::kF32);
  EXPECT_EQ(ta.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(ta.bytes.data(), a.data(), 24), 0);
  EXPECT_EQ(f.tensors().at("b").dtype, ElementType::kF16);
  EXPECT_EQ(f.metadata()["format"], "pt");
  // The data section starts 8-byte aligned.
  EXPECT_EQ((ta.bytes.data() - f.tensors().at("a").bytes.data()) % 8, 0);
}

TEST(Safetensors, TooShortFile) {
  testing::TempDir dir;
  write_file_atomic(dir.path() / "t.safetensors", "abc");
  EXPECT_KILN_ERROR(SafetensorsFile(dir.path() / "t.safetensors"), "t.safetensors", "truncated");
}

TEST(Safetensors, HeaderLengthBeyondFile) {
  testing::TempDir dir;
  auto path = write_raw(dir, "{}", "", 1000);
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "model.safetensors", "header length 1000 exceeds the file");
}

TEST(Safetensors, HeaderNotJson) {
  testing::TempDir dir;
  auto path = write_raw(dir, "{not json", "");
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "header: invalid JSON");
}

// A number past a double is nlohmann's out_of_range, which must not escape as itself.
TEST(Safetensors, HeaderNumberTooLargeForADouble) {
  testing::TempDir dir;
  auto path = write_raw(dir, R"({"__metadata__": {"x": 1e400}})", "");
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "model.safetensors", "header: invalid JSON", "1e400");
}

TEST(Safetensors, OffsetsOutOfBoundsMeansTruncated) {
  testing::TempDir dir;
  auto path = write_raw(dir, R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(8, '\0'));
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "tensor 'w'", "out of bounds", "8 bytes");
}

TEST(Safetensors, SizeDisagreesWithShape) {
  testing::TempDir dir;
  auto path = write_raw(dir, R"({"w":{"dtype":"BF16","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0'));
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "tensor 'w'", "holds 8 bytes", "needs 6");
}

TEST(Safetensors, OverlappingTensors) {
  testing::TempDir dir;
  auto path = write_raw(dir,
                        R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                        std::string(12, '\0'));
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "'a' and 'b' overlap");
}

TEST(Safetensors, UnknownDtype) {
  testing::TempDir dir;
  auto path = write_raw(dir, R"({"w":{"dtype":"F8_E9","shape":[1],"data_offsets":[0,1]}})", std::string(1, '\0'));
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "tensor 'w'", "unknown dtype 'F8_E9'", "accepted");
  // kiln's IR packs I4 / U4; safetensors has no such dtype.
  path = write_raw(dir, R"({"w":{"dtype":"I4","shape":[2],"data_offsets":[0,1]}})", std::string(1, '\0'));
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "tensor 'w'", "unknown dtype 'I4'", "BOOL");
}

TEST(Safetensors, MalformedEntries) {
  testing::TempDir dir;
  auto path = write_raw(dir, R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", "");
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "tensor 'w'", "shape");
  path = write_raw(dir, R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", std::string(4, '\0'));
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "begin after end");
  path = write_raw(dir, R"({"w":{"shape":[1],"data_offsets":[0,4]}})", std::string(4, '\0'));
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "tensor 'w'", "missing required field 'dtype'");
}

// An entry past int64 read back as -1; with a zero dimension the byte count (0) still matched,
// so the view came out with a negative dimension.
TEST(Safetensors, ShapeBeyondInt64) {
  testing::TempDir dir;
  auto path = write_raw(dir, R"({"w":{"dtype":"F16","shape":[0,18446744073709551615],"data_offsets":[0,0]}})", "");
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "tensor 'w'", "'shape' entry 18446744073709551615 is out of range");
  // 2^62 * 2 elements pass int64 before the 0 makes the tensor empty (and its byte count 0).
  path = write_raw(dir, R"({"w":{"dtype":"U8","shape":[4611686018427387904,2,0],"data_offsets":[0,0]}})", "");
  EXPECT_KILN_ERROR(SafetensorsFile{path}, "tensor 'w'", "is too large");
}

}  // namespace
}  // namespace kiln::ir
