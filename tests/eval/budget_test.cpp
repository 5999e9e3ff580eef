// Oracles: the worked example of a Llama 3.1 8B budget (tests/data/configs/llama-3.1-8b.json:
// KV 131,072 bytes per token in f16, 0.5 GiB at 4,096 tokens, 4 GiB at 32k, about half in u8
// plus scales; int4 g128 with int8 embedding and head near 4.3 GiB), the same figures by hand
// from the config's shapes, and the identity that planning a checkpoint in its own float type
// gives exactly the bytes its safetensors files hold.
#include <gtest/gtest.h>

#include "eval/kv_budget.hpp"
#include "eval/weight_budget.hpp"
#include "eval_fixtures.hpp"
#include "ir/hf_checkpoint.hpp"

namespace kiln::eval {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ir::ModelConfig llama31_8b() {
  return ir::load_model_config(testing::test_data_dir() / "configs" / "llama-3.1-8b.json");
}

std::uint64_t bytes_of(const WeightBudget& b, WeightClass c) { return b.bytes[static_cast<std::size_t>(c)]; }

TEST(KvBudget, Llama31_8bWorkedExample) {
  const ir::ModelConfig c = llama31_8b();
  const std::uint64_t f16 = kv_bytes_per_token(c, {.precision = ElementType::kF16});
  EXPECT_EQ(f16, 131072u);  // 2 · 32 layers · 8 heads · 128 · 2 bytes
  EXPECT_EQ(static_cast<double>(f16 * 4096) / kGiB, 0.5);
  EXPECT_EQ(static_cast<double>(f16 * 32768) / kGiB, 4.0);
  EXPECT_EQ(kv_bytes_per_token(c, {.precision = ElementType::kBf16}), f16);
  EXPECT_EQ(kv_bytes_per_token(c, {.precision = ElementType::kF32}), 2 * f16);
  // u8, groups of 32: 128 codes + 4 groups · (f32 scale + f32 zero point) per head vector.
  const std::uint64_t u8 = kv_bytes_per_token(c, {.precision = ElementType::kU8, .group_size = 32});
  EXPECT_EQ(u8, 2u * 32 * 8 * (128 + 4 * 8));
  EXPECT_GT(static_cast<double>(u8), 0.5 * static_cast<double>(f16));  // half plus the overhead
  EXPECT_LT(static_cast<double>(u8), 0.65 * static_cast<double>(f16));
  // A group wider than the head still gets one scale per head vector.
  EXPECT_EQ(kv_bytes_per_token(c, {.precision = ElementType::kU8, .group_size = 256}), 2u * 32 * 8 * (128 + 8));
}

TEST(KvBudget, ParsesPrecisionsAndRejectsOthers) {
  EXPECT_EQ(parse_kv_precision_flag("u8"), ElementType::kU8);
  EXPECT_EQ(parse_kv_precision_flag("bf16"), ElementType::kBf16);
  EXPECT_KILN_ERROR(parse_kv_precision_flag("fp8"), "--kv-precision 'fp8'", "f16", "u8");
  EXPECT_KILN_ERROR(kv_bytes_per_token(llama31_8b(), {.precision = ElementType::kU8, .group_size = 0}),
                    "--kv-group-size");
}

TEST(WeightBudget, Llama31_8bInt4Group128WithInt8EmbeddingAndHead) {
  const WeightBudget b = plan_weights(llama31_8b(), {.scheme = parse_weight_format_name("int4"), .group_size = 128});
  // By hand: embedding and head 128256 · 4096 int8 each; 32 layers of q, o 4096², k, v 1024·4096,
  // gate, up, down 14336·4096 in 4 bits, with an f16 scale and a 4-bit zero point per 128.
  const std::uint64_t table = 128256ull * 4096;
  const std::uint64_t layer_params = 32ull * (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336ull * 4096);
  EXPECT_EQ(bytes_of(b, WeightClass::kEmbedding), table);
  EXPECT_EQ(bytes_of(b, WeightClass::kHead), table);
  EXPECT_EQ(bytes_of(b, WeightClass::kAttention) + bytes_of(b, WeightClass::kMlp), layer_params / 2);
  EXPECT_EQ(bytes_of(b, WeightClass::kNorm), (2ull * 32 + 1) * 4096 * 4);  // f32 in quantised exports
  // Per-channel int8_asym for embedding and head: one f16 scale and one u8 zero point per row.
  EXPECT_EQ(bytes_of(b, WeightClass::kScales), layer_params / 128 * 2 + 2 * 128256ull * 2);
  EXPECT_EQ(bytes_of(b, WeightClass::kZeroPoints), layer_params / 128 / 2 + 2 * 128256ull);
  // The worked example's figures.
  EXPECT_NEAR(static_cast<double>(2 * table) / kGiB, 0.98, 0.01);
  EXPECT_NEAR(static_cast<double>(layer_params) / 1e9, 6.98, 0.01);
  EXPECT_NEAR(static_cast<double>(layer_params / 2) / kGiB, 3.25, 0.01);
  EXPECT_NEAR(static_cast<double>(bytes_of(b, WeightClass::kScales)) / kGiB, 0.1, 0.01);
  EXPECT_NEAR(static_cast<double>(b.total_bytes()) / kGiB, 4.3, 0.1);
  EXPECT_NEAR(static_cast<double>(b.num_params) / 1e9, 8.03, 0.01);
  EXPECT_EQ(b.share_4bit, 1.0);
}

TEST(WeightBudget, FormatChoicesMoveTheRightBytes) {
  const ir::ModelConfig c = llama31_8b();
  const std::uint64_t table = 128256ull * 4096;
  const WeightBudget asym = plan_weights(c, {.scheme = WeightScheme::kInt4Asym});  // default group 128
  const WeightBudget sym = plan_weights(c, {.scheme = parse_weight_format_name("int4", /*sym=*/true)});
  // Symmetric int4 drops the layers' zero points; embedding and head stay int8_asym.
  EXPECT_EQ(bytes_of(sym, WeightClass::kZeroPoints), 2 * 128256ull);
  EXPECT_EQ(bytes_of(sym, WeightClass::kScales), bytes_of(asym, WeightClass::kScales));
  // --all-layers: embedding and head in int4 g128 too.
  const WeightBudget all = plan_weights(c, {.scheme = WeightScheme::kInt4Asym, .all_layers = true});
  EXPECT_EQ(bytes_of(all, WeightClass::kEmbedding), table / 2);
  EXPECT_EQ(bytes_of(all, WeightClass::kHead), table / 2);
  // --ratio 0.8: about 80% of the layers' parameters in 4 bits, the rest in int8.
  const WeightBudget mixed = plan_weights(c, {.scheme = WeightScheme::kInt4Asym, .ratio = 0.8});
  EXPECT_LE(mixed.share_4bit, 0.8);
  EXPECT_GT(mixed.share_4bit, 0.79);
  EXPECT_GT(mixed.total_bytes(), asym.total_bytes());
  // Per-channel int4 (-1): one scale per row.
  const WeightBudget channel = plan_weights(c, {.scheme = WeightScheme::kInt4Sym, .group_size = -1});
  EXPECT_LT(bytes_of(channel, WeightClass::kScales), bytes_of(sym, WeightClass::kScales) / 20);
  // fp16: two bytes per parameter, nothing else.
  const WeightBudget f16 = plan_weights(c, {.scheme = parse_weight_format_name("fp16")});
  EXPECT_EQ(f16.total_bytes(), 2 * static_cast<std::uint64_t>(f16.num_params));
  EXPECT_EQ(bytes_of(f16, WeightClass::kScales), 0u);
  // int8: per channel by default, embedding and head included.
  const WeightBudget int8 = plan_weights(c, {.scheme = parse_weight_format_name("int8")});
  EXPECT_EQ(bytes_of(int8, WeightClass::kEmbedding), table);
  EXPECT_EQ(int8.tensors[2].name, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(int8.tensors[2].group_size, 4096);
}

TEST(WeightBudget, OwnFloatTypeEqualsTheCheckpointsBytes) {
  for (const std::string name : {"llama3_tiny", "llama2_tiny", "llama_bias_tiny"}) {
    const ir::HfCheckpoint checkpoint(testing::checkpoint_dir(name));
    const WeightBudget stored = measure_stored_weights(checkpoint.config(), checkpoint);
    const WeightScheme own = stored.tensors.front().scheme;
    const WeightBudget plan = plan_weights(checkpoint.config(), {.scheme = own});
    EXPECT_EQ(plan.bytes, stored.bytes) << name;
    EXPECT_EQ(plan.num_params, stored.num_params) << name;
    EXPECT_GT(stored.total_bytes(), 0u);
  }
}

TEST(WeightBudget, RejectsChoicesThatDoNotApply) {
  const ir::ModelConfig c = llama31_8b();
  EXPECT_KILN_ERROR(parse_weight_format_name("int3"), "--weight-format 'int3'", "int4", "nf4", "int8_sym");
  EXPECT_KILN_ERROR(parse_weight_format_name("fp16", /*sym=*/true), "--sym", "fp16");
  EXPECT_KILN_ERROR(plan_weights(c, {.scheme = WeightScheme::kF16, .ratio = 0.5}), "--ratio", "4-bit");
  EXPECT_KILN_ERROR(plan_weights(c, {.scheme = WeightScheme::kInt4Asym, .ratio = 1.5}), "--ratio", "1.5");
  EXPECT_KILN_ERROR(plan_weights(c, {.scheme = WeightScheme::kInt4Asym, .group_size = 0}), "--group-size");
  EXPECT_KILN_ERROR(plan_weights(c, {.scheme = WeightScheme::kBf16, .group_size = 64}), "--group-size", "bf16");
}

}  // namespace
}  // namespace kiln::eval
