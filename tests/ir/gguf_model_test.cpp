// Oracle: llama.cpp's own converter and quantiser. tests/data/gguf/models holds tiny checkpoints
// of tests/data/checkpoints converted by convert_hf_to_gguf.py (f16) and quantised by
// llama_model_quantize (tools/make_gguf_models.py). Imported, every tensor must be the
// checkpoint's under its Hugging Face name and shape, with the checkpoint's values rounded to
// f16 (so the name map and the q/k un-permutation are exactly the converter's inverse); the
// config must be the checkpoint's; Q8_0 and Q4_0 must arrive bit-exact and the other block
// types within the re-quantisation's bound.
#include "ir/gguf_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/gguf_dequantize.hpp"
#include "ir/gguf_weight_import.hpp"
#include "ir/hf_checkpoint.hpp"
#include "ir/tensor_convert.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"
#include "util/half.hpp"

namespace kiln::ir {
namespace {

std::filesystem::path gguf_model_path(const std::string& file) {
  return testing::test_data_dir() / "gguf" / "models" / file;
}

HfCheckpoint checkpoint(const std::string& name) {
  return HfCheckpoint(testing::test_data_dir() / "checkpoints" / name);
}

class GgufF16Import : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufF16Import, TensorsAreTheCheckpointsRoundedToF16) {
  const HfCheckpoint hf = checkpoint(GetParam());
  const GgufModel gguf(gguf_model_path(GetParam() + ".f16.gguf"));
  std::size_t compared = 0;
  for (const std::string& name : hf.names()) {
    const TensorView* want = hf.find(name);
    const TensorView* got = gguf.find(name);
    if (name == "lm_head.weight" && hf.config().tie_word_embeddings) continue;  // the converter drops a tied copy
    ASSERT_NE(got, nullptr) << name;
    ASSERT_EQ(got->shape, want->shape) << name;
    const std::vector<float> expected = to_f32(*want);
    const std::vector<float> actual = to_f32(*got);
    const bool kept_f32 = got->dtype == ElementType::kF32;  // the converter keeps norms in f32
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const float e = kept_f32 ? expected[i] : f16_to_f32(f32_to_f16(expected[i]));
      ASSERT_EQ(actual[i], e) << name << " element " << i;
    }
    ++compared;
  }
  EXPECT_EQ(compared, gguf.names().size());
}

TEST_P(GgufF16Import, ConfigIsTheCheckpoints) {
  const ModelConfig want = checkpoint(GetParam()).config();
  const ModelConfig got = GgufModel(gguf_model_path(GetParam() + ".f16.gguf")).config();
  // llama.cpp writes Mistral's files as "llama" (and runs them without the sliding window).
  EXPECT_EQ(got.family, want.family == "mistral" ? "llama" : want.family);
  EXPECT_EQ(got.hidden_size, want.hidden_size);
  EXPECT_EQ(got.num_layers, want.num_layers);
  EXPECT_EQ(got.num_heads, want.num_heads);
  EXPECT_EQ(got.num_kv_heads, want.num_kv_heads);
  EXPECT_EQ(got.head_dim, want.head_dim);
  EXPECT_EQ(got.rotary_dim, want.rotary_dim);
  EXPECT_EQ(got.intermediate_size, want.intermediate_size);
  EXPECT_EQ(got.vocab_size, want.vocab_size);
  EXPECT_EQ(got.max_position_embeddings, want.max_position_embeddings);
  EXPECT_NEAR(got.rms_norm_eps, want.rms_norm_eps, 1e-12);  // stored as f32
  EXPECT_EQ(got.rope_theta, want.rope_theta);
  EXPECT_EQ(got.tie_word_embeddings, want.tie_word_embeddings);
  EXPECT_EQ(got.attention_bias, want.attention_bias);
  EXPECT_EQ(got.qk_norm, want.qk_norm);
  EXPECT_EQ(got.bos_token_id, want.bos_token_id);
  for (std::int32_t eos : want.eos_token_ids) {
    EXPECT_NE(std::find(got.eos_token_ids.begin(), got.eos_token_ids.end(), eos), got.eos_token_ids.end()) << eos;
  }
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, GgufF16Import,
                         ::testing::Values("llama3_tiny", "qwen2_tiny", "qwen3_tiny", "mistral_tiny"));

// The un-permuted rows of a quantised q/k projection, decoded by ggml's reference dequantiser.
std::vector<float> decoded_as_imported(const GgufTensor& t, const ModelConfig& config) {
  std::size_t heads = 0;
  if (t.name.ends_with("attn_q.weight")) heads = static_cast<std::size_t>(config.num_heads);
  if (t.name.ends_with("attn_k.weight")) heads = static_cast<std::size_t>(config.num_kv_heads);
  const std::size_t rows = t.dims.size() > 1 ? t.dims[1] : 1;
  return decode_rows(t, heads ? unpermute_rows(rows, heads) : identity_rows(rows));
}

TEST(GgufImport, Q8AndQ4BlocksArriveBitExact) {
  for (const char* file : {"llama3_tiny.q8_0.gguf", "llama3_tiny.q4_0.gguf"}) {
    const GgufModel model(gguf_model_path(file));
    std::size_t exact = 0;
    for (const GgufTensor& t : model.file().tensors()) {
      if (t.type != GgmlType::kQ8_0 && t.type != GgmlType::kQ4_0) continue;
      const TensorView* imported = model.find(hf_tensor_name(t.name));
      ASSERT_NE(imported, nullptr) << t.name;
      EXPECT_EQ(to_f32(*imported), decoded_as_imported(t, model.config())) << file << ": " << t.name;
      ++exact;
    }
    EXPECT_GT(exact, 10u) << file;
  }
}

TEST(GgufImport, ExactBlocksKeepCodesAndScales) {
  // tiny.gguf's Q8_0 and Q4_0 tensors are random bits: every code and scale must survive.
  const GgufFile file(testing::test_data_dir() / "gguf" / "tiny.gguf");
  for (const GgufTensor& t : file.tensors()) {
    if (t.type != GgmlType::kQ8_0 && t.type != GgmlType::kQ4_0) continue;
    const std::size_t rows = t.dims[1];
    const QuantizedMatrix m = import_exact_blocks(t, identity_rows(rows));
    std::vector<float> want(t.elements());
    dequantize_gguf(t.type, t.bytes, want);
    const std::vector<float> got = dequantize_weights(m.view());
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << t.name << " element " << i;
  }
}

TEST(GgufImport, OtherBlockTypesAreRequantisedWithinOneInt8Step) {
  for (const char* file : {"llama3_tiny.q4_1.gguf", "ktiny.q4_k_m.gguf", "ktiny.q6_k.gguf"}) {
    const GgufModel model(gguf_model_path(file));
    for (const GgufTensor& t : model.file().tensors()) {
      if (exact_kiln_scheme(t.type) || t.dims.size() != 2) continue;
      const std::vector<float> decoded = decoded_as_imported(t, model.config());
      const TensorView* imported = model.find(hf_tensor_name(t.name));
      ASSERT_NE(imported, nullptr) << t.name;
      ASSERT_TRUE(imported->is_quantized()) << t.name;
      const WeightView w = weight_view(*imported);
      EXPECT_EQ(w.scheme, WeightScheme::kInt8Asym) << t.name;
      const std::vector<float> got = dequantize_weights(w);
      ASSERT_EQ(got.size(), decoded.size()) << t.name;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const QuantParams p = read_params(w, i / w.in, (i % w.in) / w.group_size);
        // Round to nearest: half a step, or one where the zero point's rounding clips an extreme.
        ASSERT_LE(std::fabs(got[i] - decoded[i]), std::fabs(p.scale) * 1.001f) << file << ": " << t.name;
      }
    }
  }
}

// A copy of a fixture with one byte string replaced by another of the same length.
std::filesystem::path patched_copy(const testing::TempDir& dir, const std::string& file, const std::string& from,
                                   const std::string& to) {
  std::string bytes = read_file(gguf_model_path(file));
  const std::size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  bytes.replace(at, from.size(), to);
  const std::filesystem::path path = dir.path() / file;
  write_file_atomic(path, bytes);
  return path;
}

TEST(GgufImport, RefusesWhatKilnCannotRunNamingIt) {
  const testing::TempDir dir;
  const std::string file = "llama3_tiny.q8_0.gguf";
  EXPECT_KILN_ERROR(GgufModel(patched_copy(dir, file, "llama", "bloom")), "general.architecture 'bloom'",
                    "supported: llama, qwen2, qwen3");
  EXPECT_KILN_ERROR(GgufModel(patched_copy(dir, file, "llama.block_count", "llama.block_coun_")), "llama.block_count",
                    "llama3_tiny.q8_0.gguf: metadata");
  EXPECT_KILN_ERROR(GgufModel(patched_copy(dir, file, "output_norm.weight", "output_nurm.weight")),
                    "tensor 'output_nurm.weight' has no place in a llama model");
  EXPECT_KILN_ERROR(GgufModel(patched_copy(dir, file, "tokenizer.ggml.model", "tokenizer.ggml.modal")),
                    "tokenizer.ggml.model is missing");
  EXPECT_FALSE(GgufModel::is_gguf_file(testing::test_data_dir() / "checkpoints" / "llama3_tiny" / "config.json"));
  EXPECT_FALSE(GgufModel::is_gguf_file(testing::test_data_dir() / "checkpoints" / "llama3_tiny"));
  EXPECT_TRUE(GgufModel::is_gguf_file(gguf_model_path(file)));
}

TEST(GgufImport, UnpermuteInvertsTheConvertersPermutation) {
  // convert_hf_to_gguf.py's LlamaModel.permute: reshape(heads, 2, d / 2, ...).swapaxes(1, 2).
  const std::size_t heads = 3, head_dim = 8, rows = heads * head_dim;
  std::vector<std::size_t> permuted(rows);  // GGUF row -> HF row
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t half = 0; half < 2; ++half) {
      for (std::size_t j = 0; j < head_dim / 2; ++j)
        permuted[h * head_dim + 2 * j + half] = h * head_dim + half * head_dim / 2 + j;
    }
  }
  const std::vector<std::size_t> order = unpermute_rows(rows, heads);
  for (std::size_t r = 0; r < rows; ++r) EXPECT_EQ(permuted[order[r]], r);
}

}  // namespace
}  // namespace kiln::ir
