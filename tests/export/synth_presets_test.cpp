// Oracle: the published model cards' parameter counts (Qwen2.5-0.5B: 494,032,768 = 0.49B, 0.36B
// without the embedding; Qwen3-0.6B: 0.6B, 0.44B without it) against the tensor list kiln would
// synthesize for each `kiln synth --like` preset.
#include <gtest/gtest.h>

#include "export/synthetic_checkpoint.hpp"
#include "ir/model_config.hpp"
#include "models/tensor_specs.hpp"

namespace kiln::exporter {
namespace {

struct Counts {
  std::int64_t total = 0, embedding = 0;
};

Counts count_parameters(const ir::ModelConfig& config) {
  Counts c;
  for (const models::TensorSpec& spec : models::tensor_specs(config)) {
    std::int64_t n = 1;
    for (std::int64_t d : spec.shape) n *= d;
    c.total += n;
    if (spec.role == models::TensorRole::kEmbedding) c.embedding += n;
  }
  return c;
}

TEST(SynthPresets, QwenShapesMatchThePublishedModels) {
  const ir::ModelConfig qwen25 = ir::parse_model_config(*synth_preset_config("qwen2.5-0.5b"), "qwen2.5-0.5b");
  EXPECT_EQ(qwen25.family, "qwen2");
  const Counts a = count_parameters(qwen25);
  EXPECT_EQ(a.total, 494032768);
  EXPECT_NEAR(static_cast<double>(a.total - a.embedding), 0.36e9, 0.005e9);
  const ir::ModelConfig qwen3 = ir::parse_model_config(*synth_preset_config("qwen3-0.6b"), "qwen3-0.6b");
  EXPECT_EQ(qwen3.family, "qwen3");
  EXPECT_TRUE(qwen3.qk_norm);
  const Counts b = count_parameters(qwen3);
  EXPECT_NEAR(static_cast<double>(b.total), 0.6e9, 0.005e9);
  EXPECT_NEAR(static_cast<double>(b.total - b.embedding), 0.44e9, 0.005e9);
  EXPECT_FALSE(synth_preset_config("qwen3-8b").has_value());
}

}  // namespace
}  // namespace kiln::exporter
