// What the non-Llama classes add, checked against independent oracles: Phi-3's split projections
// are the fused tensor's rows as safetensors stores them (read here without the split); LongRoPE
// positions beyond the original context fail clearly instead of silently using the wrong
// factors; Mistral's sliding window is exactly a truncated context (a run whose window covers the
// whole context gives the logits of the unwindowed model; one that does not, differs).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "golden_checkpoint.hpp"
#include "ir/safetensors.hpp"
#include "models/model_factory.hpp"
#include "runtime/reference/reference_ops.hpp"

namespace kiln::models {
namespace {

std::unique_ptr<LanguageModel> reference_model(const ir::ModelConfig& config,
                                               std::shared_ptr<const ir::TensorSource> source) {
  KvCacheLayout kv;
  kv.block_size = 4;
  kv.num_blocks = 64;
  return create_language_model(config, std::move(source), std::make_unique<runtime::ReferenceOps>(), kv);
}

std::vector<float> full_forward(LanguageModel& model, std::span<const std::int32_t> ids) {
  std::vector<std::int32_t> blocks(64);
  std::iota(blocks.begin(), blocks.end(), 0);
  const SequenceChunk chunk{ids, 0, blocks, LogitsMode::kAll};
  StepOutput out;
  model.step({&chunk, 1}, out);
  return out.logits;
}

TEST(DecoderVariants, Phi3SplitViewsAreTheFusedRows) {
  const auto dir = testing::golden_checkpoint_dir("phi3_tiny");
  ir::HfCheckpoint ckpt(dir);
  ir::SafetensorsFile file(dir / "model.safetensors");
  const ir::TensorView& qkv = file.tensors().at("model.layers.1.self_attn.qkv_proj.weight");
  EXPECT_EQ(ckpt.find("model.layers.1.self_attn.qkv_proj.weight"), nullptr);
  const ir::TensorView* k = ckpt.find("model.layers.1.self_attn.k_proj.weight");
  ASSERT_NE(k, nullptr);
  const ir::ModelConfig& c = ckpt.config();
  EXPECT_EQ(k->shape, (std::vector<std::int64_t>{c.kv_dim(), c.hidden_size}));
  const std::size_t row_bytes = qkv.bytes.size() / static_cast<std::size_t>(qkv.shape[0]);
  ASSERT_EQ(k->bytes.size(), static_cast<std::size_t>(c.kv_dim()) * row_bytes);
  EXPECT_EQ(std::memcmp(k->bytes.data(), qkv.bytes.data() + c.q_dim() * row_bytes, k->bytes.size()), 0);
  const ir::TensorView* up = ckpt.find("model.layers.1.mlp.up_proj.weight");
  ASSERT_NE(up, nullptr);
  const ir::TensorView& gate_up = file.tensors().at("model.layers.1.mlp.gate_up_proj.weight");
  ASSERT_EQ(up->bytes.size(), gate_up.bytes.size() / 2);
  EXPECT_EQ(std::memcmp(up->bytes.data(), gate_up.bytes.data() + up->bytes.size(), up->bytes.size()), 0);
}

TEST(DecoderVariants, LongRopeRefusesPositionsBeyondTheOriginalContext) {
  auto ckpt = std::make_shared<ir::HfCheckpoint>(testing::golden_checkpoint_dir("phi3_tiny"));
  auto model = reference_model(ckpt->config(), ckpt);
  const std::int64_t limit = ckpt->config().rope_scaling.original_max_position_embeddings;  // 96
  std::vector<std::int32_t> blocks(64);
  std::iota(blocks.begin(), blocks.end(), 0);
  const std::vector<std::int32_t> token{1};
  StepOutput out;
  const SequenceChunk last_ok{token, limit - 1, blocks, LogitsMode::kLast};
  EXPECT_NO_THROW(model->step({&last_ok, 1}, out));
  const SequenceChunk beyond{token, limit, blocks, LogitsMode::kLast};
  EXPECT_KILN_ERROR(model->step({&beyond, 1}, out), "position 96", "original_max_position_embeddings (96)",
                    "long_factor");
}

TEST(DecoderVariants, SlidingWindowIsATruncatedContext) {
  auto ckpt = std::make_shared<ir::HfCheckpoint>(testing::golden_checkpoint_dir("mistral_tiny"));
  const auto golden = testing::load_golden_checkpoint("mistral_tiny");
  const std::vector<std::int32_t>& ids = golden.prompts[1].ids;  // 34 tokens, window 8
  ir::ModelConfig unwindowed = ckpt->config();
  unwindowed.sliding_window = 0;
  ir::ModelConfig wide = ckpt->config();
  wide.sliding_window = static_cast<std::int64_t>(ids.size());
  const auto plain = full_forward(*reference_model(unwindowed, ckpt), ids);
  EXPECT_EQ(full_forward(*reference_model(wide, ckpt), ids), plain);
  const auto windowed = full_forward(*reference_model(ckpt->config(), ckpt), ids);
  const std::size_t vocab = static_cast<std::size_t>(ckpt->config().vocab_size);
  // The first 8 positions see their whole context either way; the later ones do not.
  EXPECT_TRUE(std::equal(windowed.begin(), windowed.begin() + 8 * vocab, plain.begin()));
  EXPECT_FALSE(std::equal(windowed.begin() + 8 * vocab, windowed.end(), plain.begin() + 8 * vocab));
}

}  // namespace
}  // namespace kiln::models
