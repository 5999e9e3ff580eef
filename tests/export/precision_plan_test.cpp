// Oracle: NNCF's assignment rules (MixedPrecisionCriterion.apply, _get_ratio_defining_params),
// checked on the golden checkpoints' tensor lists: embedding/head at the backup precision unless
// --all-layers, norms f32, --ratio filling the primary precision least-sensitive first.
#include "export/precision_plan.hpp"

#include <gtest/gtest.h>

#include "../models/golden_checkpoint.hpp"

namespace kiln::exporter {
namespace {

ExportRecipe int4_recipe() {
  ExportOptions o;
  o.weight_format = WeightScheme::kInt4Asym;
  o.sym = true;
  o.group_size = 32;
  return resolve_recipe(o, 1);
}

const TensorPlan& find(const std::vector<TensorPlan>& plan, const std::string& name) {
  for (const TensorPlan& p : plan) {
    if (p.spec.name == name) return p;
  }
  throw std::runtime_error("no " + name);
}

TEST(PrecisionPlan, Int4KeepsEmbeddingAndHeadAtBackup) {
  const auto ckpt = ir::HfCheckpoint(testing::golden_checkpoint_dir("llama2_tiny"));  // untied head
  const auto plan = plan_tensors(ckpt.config(), ckpt, int4_recipe(), {});
  EXPECT_EQ(find(plan, "model.embed_tokens.weight").scheme, WeightScheme::kInt8Asym);
  EXPECT_EQ(find(plan, "lm_head.weight").scheme, WeightScheme::kInt8Asym);
  EXPECT_EQ(find(plan, "lm_head.weight").group_size, ckpt.config().hidden_size);  // per channel
  const TensorPlan& q = find(plan, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(q.scheme, WeightScheme::kInt4Sym);
  EXPECT_EQ(q.group_size, 32);
  EXPECT_TRUE(q.primary);
  EXPECT_EQ(find(plan, "model.norm.weight").scheme, WeightScheme::kF32);

  ExportRecipe all = int4_recipe();
  all.all_layers = true;
  const auto plan_all = plan_tensors(ckpt.config(), ckpt, all, {});
  EXPECT_EQ(find(plan_all, "model.embed_tokens.weight").scheme, WeightScheme::kInt4Sym);
  EXPECT_EQ(find(plan_all, "lm_head.weight").scheme, WeightScheme::kInt4Sym);
}

TEST(PrecisionPlan, RatioTakesLeastSensitiveFirstByParameters) {
  const auto ckpt = ir::HfCheckpoint(testing::golden_checkpoint_dir("llama3_tiny"));
  ExportRecipe r = int4_recipe();
  r.ratio = 0.5;
  std::map<std::string, double> scores;
  std::int64_t total = 0;
  double score = 0;
  for (const auto& spec : models::tensor_specs(ckpt.config())) {
    TensorPlan p;
    p.spec = spec;
    if (!is_ratio_defining(spec, r)) continue;
    scores[spec.name] = (score += 1.0);  // model order = ascending sensitivity
    total += p.num_parameters();
  }
  const auto plan = plan_tensors(ckpt.config(), ckpt, r, scores);
  std::int64_t primary = 0;
  bool seen_backup = false;
  for (const TensorPlan& p : plan) {
    if (!p.ratio_defining) continue;
    if (p.primary) {
      EXPECT_FALSE(seen_backup) << p.spec.name << ": a more sensitive layer got int4 before a less sensitive one";
      primary += p.num_parameters();
    } else {
      seen_backup = true;
      EXPECT_EQ(p.scheme, WeightScheme::kInt8Asym) << p.spec.name;
    }
  }
  EXPECT_LT(double(primary) / double(total), 0.5);
  EXPECT_GT(double(primary) / double(total), 0.3);  // 14 matrices of similar size: close to the ratio
  EXPECT_TRUE(seen_backup);
}

TEST(PrecisionPlan, BackupNoneKeepsSourcePrecision) {
  const auto ckpt = ir::HfCheckpoint(testing::golden_checkpoint_dir("llama2_tiny"));  // bf16
  ExportRecipe r = int4_recipe();
  r.backup = BackupPrecision::kNone;
  const auto plan = plan_tensors(ckpt.config(), ckpt, r, {});
  EXPECT_EQ(find(plan, "lm_head.weight").scheme, WeightScheme::kBf16);
}

}  // namespace
}  // namespace kiln::exporter
