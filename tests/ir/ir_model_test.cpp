// Oracle: IRs written by IrWriter read back byte for byte through IrModel; hand-corrupted copies
// (truncated, re-ordered, overlapping, misaligned, checksum-broken, newer/older format) are
// rejected with messages naming the file, the tensor and the problem.
#include "ir/ir_model.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "ir/ir_writer.hpp"
#include "ir/tensor_convert.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"
#include "util/half.hpp"

namespace kiln::ir {
namespace {

namespace fs = std::filesystem;

ModelConfig tiny_config() {
  return parse_model_config(Json{{"architectures", {"LlamaForCausalLM"}},
                                 {"hidden_size", 8},
                                 {"num_hidden_layers", 1},
                                 {"num_attention_heads", 2},
                                 {"intermediate_size", 16},
                                 {"vocab_size", 10}},
                            "test");
}

std::span<const std::uint8_t> bytes_of(const std::vector<float>& v) {
  return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4};
}

// An IR with an f32 vector [3], an int4_asym [4, 6] matrix (g4: a partial last group) and an
// f16 matrix [2, 2].
struct SampleIr {
  testing::TempDir dir;
  std::vector<float> gain{1.0f, -2.5f, 3.0f};
  std::vector<float> matrix;  // [4, 6]
  QuantizedMatrix quantized{WeightScheme::kInt4Asym, 4, 6, 4};

  SampleIr() {
    for (int i = 0; i < 24; ++i) matrix.push_back(0.1f * float(i % 7) - 0.3f + 0.01f * float(i));
    quantized = quantize_weights(matrix, 4, 6, WeightScheme::kInt4Asym, 4, "m");
    IrWriter w(dir.path());
    w.add_tensor(IrTensorEntry::plain("gain", ElementType::kF32, {3}), bytes_of(gain));
    IrTensorEntry m = IrTensorEntry::plain("m", ElementType::kU4, {4, 6});
    m.quantization = IrQuantization{WeightScheme::kInt4Asym, 4, "m.scale", "m.zero_point"};
    w.add_tensor(m, quantized.data());
    w.add_tensor(IrTensorEntry::plain("m.scale", ElementType::kF16, {4, 2}),
                 {reinterpret_cast<const std::uint8_t*>(quantized.scales().data()), quantized.scales().size() * 2});
    w.add_tensor(IrTensorEntry::plain("m.zero_point", ElementType::kU4, {4, 2}), quantized.zero_points());
    const std::vector<std::uint16_t> h{f32_to_f16(1.0f), f32_to_f16(2.0f), f32_to_f16(-3.0f), f32_to_f16(0.5f)};
    w.add_tensor(IrTensorEntry::plain("h", ElementType::kF16, {2, 2}),
                 {reinterpret_cast<const std::uint8_t*>(h.data()), 8});
    w.finish(tiny_config(), "kiln test");
  }
  fs::path path() const { return dir.path(); }
  Json model_json() const { return read_json_file(path() / "model.json"); }
  void write_model_json(const Json& j) const { write_file_atomic(path() / "model.json", j.dump()); }
};

TEST(IrModel, RoundTripsEveryTensor) {
  SampleIr ir;
  IrModel model(ir.path());
  EXPECT_EQ(model.config().hidden_size, 8);
  EXPECT_EQ(model.producer(), "kiln test");
  // Companions are reached through their weight, not listed as tensors.
  EXPECT_EQ(model.names(), (std::vector<std::string>{"gain", "h", "m"}));
  EXPECT_EQ(to_f32(*model.find("gain")), ir.gain);
  EXPECT_EQ(to_f32(*model.find("h")), (std::vector<float>{1.0f, 2.0f, -3.0f, 0.5f}));
  const TensorView& m = *model.find("m");
  ASSERT_TRUE(m.is_quantized());
  EXPECT_EQ(m.quantization->scheme, WeightScheme::kInt4Asym);
  EXPECT_EQ(to_f32(m), dequantize_weights(ir.quantized.view()));
  // A range that starts and ends mid-row decodes the same values.
  std::vector<float> part(9);
  convert_to_f32(m, 5, 9, part.data());
  const std::vector<float> all = to_f32(m);
  EXPECT_TRUE(std::equal(part.begin(), part.end(), all.begin() + 5));
  for (const IrTensorEntry& e : model.entries()) EXPECT_EQ(e.offset % kIrAlignment, 0u) << e.name;
}

TEST(IrModel, RejectsTruncatedBin) {
  SampleIr ir;
  fs::resize_file(ir.path() / "model.bin", fs::file_size(ir.path() / "model.bin") - 3);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "model.bin", "is truncated", "'h'");
}

TEST(IrModel, RejectsTrailingBytes) {
  SampleIr ir;
  std::ofstream(ir.path() / "model.bin", std::ios::app | std::ios::binary) << "xyz";
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "model.bin", "ends at byte");
}

TEST(IrModel, RejectsReorderedTable) {
  SampleIr ir;
  Json j = ir.model_json();
  std::swap(j["tensors"][0], j["tensors"][1]);
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "model.json", "'gain'", "re-ordered");
}

TEST(IrModel, AnOffsetPastTheEndIsNamedAsSuchNotAsReordering) {
  SampleIr ir;
  Json j = ir.model_json();
  j["tensors"][0]["offset"] = 1 << 30;
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "model.json", "'gain' has offset 1073741824, past the end of");
}

TEST(IrModel, RejectsOverlap) {
  SampleIr ir;
  Json j = ir.model_json();
  j["tensors"][1]["offset"] = 0;  // "m" on top of "gain"... listed after it
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "model.json", "overlap");
}

TEST(IrModel, RejectsMisalignedAndGappedOffsets) {
  SampleIr ir;
  Json j = ir.model_json();
  j["tensors"][1]["offset"] = j["tensors"][1]["offset"].get<std::uint64_t>() + 8;
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'m'", "not 64-byte aligned");
  j["tensors"][1]["offset"] = j["tensors"][1]["offset"].get<std::uint64_t>() + 56;
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'m'", "expected 64");
}

TEST(IrModel, RejectsBrokenChecksum) {
  SampleIr ir;
  const IrModel clean(ir.path());
  const std::uint64_t offset = clean.entries()[1].offset;
  std::fstream f(ir.path() / "model.bin", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put('\x5a');
  f.close();
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "model.bin", "'m'", "fails its checksum", "kiln verify");
  // Structure alone still passes when the caller opts out of hashing.
  EXPECT_NO_THROW(IrModel(ir.path(), {.verify_checksums = false}));
}

TEST(IrModel, RejectsNonZeroPadding) {
  SampleIr ir;
  const IrModel clean(ir.path());
  std::fstream f(ir.path() / "model.bin", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(clean.entries()[0].end()));
  f.put('\x01');
  f.close();
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "padding before tensor 'm'", "not zero");
}

TEST(IrModel, ChecksFormatVersion) {
  SampleIr ir;
  Json j = ir.model_json();
  j["format_version"] = kIrFormatVersion + 1;
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "model.json", "newer than this kiln reads", "upgrade kiln");
  j["format_version"] = 0;
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "model.json", "older than this kiln reads", "re-export");
  j.erase("format_version");
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "format_version", "is missing");
}

TEST(IrModel, RejectsBadCompanionsAndSizes) {
  SampleIr ir;
  const Json clean = ir.model_json();
  Json j = clean;
  j["tensors"][1]["quantization"]["scale"] = "nope";
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'m'", "scale tensor that is not in the table");
  j = clean;
  j["tensors"][1]["quantization"].erase("zero_point");
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'m'", "int4_asym needs a zero_point tensor");
  j = clean;
  j["tensors"][1]["dtype"] = "I4";
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'m'", "stores codes as U4");
  j = clean;
  j["tensors"][0]["size"] = 16;
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'gain'", "has size 16", "needs 12 bytes");
  j = clean;
  j["tensors"][1]["quantization"]["group_size"] = 7;
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'m'", "group_size 7 out of range");
  j = clean;
  j["tensors"][0]["dtype"] = "F8";
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'gain'", "'F8' is not a storage type");
  j["tensors"][0]["dtype"] = "F64";  // a safetensors type, but not one model.bin stores
  ir.write_model_json(j);
  EXPECT_KILN_ERROR(IrModel{ir.path()}, "'gain'", "'F64' is not a storage type", "I4, U4");
}

TEST(IrModel, MissingFilesAreNamed) {
  testing::TempDir dir;
  EXPECT_KILN_ERROR(IrModel{dir.path()}, "model.bin is missing");
  EXPECT_FALSE(IrModel::is_ir_dir(dir.path()));
}

}  // namespace
}  // namespace kiln::ir
