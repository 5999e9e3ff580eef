// Oracle: optimum-cli's and NNCF's documented defaults and refusals (nncf/quantization/
// algorithms/weight_compression/algorithm.py get_weight_compression_configuration and
// check_user_compression_configuration), restated here as expectations.
#include "export/export_options.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace kiln::exporter {
namespace {

ExportOptions with_format(WeightScheme f) {
  ExportOptions o;
  o.weight_format = f;
  return o;
}

TEST(ExportRecipe, WeightFormatDefaultsBySize) {
  const ExportRecipe big = resolve_recipe({}, kDefaultInt8Threshold + 1);
  EXPECT_EQ(big.primary, WeightScheme::kInt8Asym);
  EXPECT_EQ(big.group_size, -1);
  EXPECT_TRUE(big.weight_format_defaulted);
  const ExportRecipe small = resolve_recipe({}, kDefaultInt8Threshold);
  EXPECT_EQ(small.primary, WeightScheme::kF32);
}

TEST(ExportRecipe, Int4Defaults) {
  ExportOptions o = with_format(WeightScheme::kInt4Asym);
  ExportRecipe r = resolve_recipe(o, 10);
  EXPECT_EQ(r.primary, WeightScheme::kInt4Asym);
  EXPECT_EQ(r.group_size, 128);
  EXPECT_EQ(r.ratio, 1.0);
  EXPECT_EQ(r.backup, BackupPrecision::kInt8Asym);
  EXPECT_EQ(r.sensitivity_metric, SensitivityMetric::kWeightQuantizationError);
  o.sym = true;
  EXPECT_EQ(resolve_recipe(o, 10).primary, WeightScheme::kInt4Sym);
  o.dataset = "builtin";
  o.awq = true;
  r = resolve_recipe(o, 10);
  EXPECT_EQ(r.num_samples, 128);
  o.ratio = 0.8;
  EXPECT_EQ(resolve_recipe(o, 10).sensitivity_metric, SensitivityMetric::kMaxActivationVariance);
  EXPECT_EQ(resolve_recipe(with_format(WeightScheme::kNf4), 10).primary, WeightScheme::kNf4);
}

TEST(ExportRecipe, RefusesWhatNncfRefuses) {
  ExportOptions o = with_format(WeightScheme::kInt8Asym);
  o.ratio = 0.5;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "--ratio", "int4 and nf4");
  o = with_format(WeightScheme::kInt8Asym);
  o.group_size = 64;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "--group-size 64");
  o = with_format(WeightScheme::kF16);
  o.sym = true;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "--sym");
  o = with_format(WeightScheme::kInt4Asym);
  o.awq = true;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "--awq needs --dataset");
  o = with_format(WeightScheme::kInt4Asym);
  o.gptq = true;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "--gptq needs --dataset");
  o = with_format(WeightScheme::kInt4Asym);
  o.dataset = "builtin";
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "nothing uses it");
  o = with_format(WeightScheme::kInt4Asym);
  o.ratio = 1.5;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "--ratio must be in (0, 1]");
  o = with_format(WeightScheme::kInt4Asym);
  o.sensitivity_metric = SensitivityMetric::kHessianInputActivation;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "needs --ratio below 1");
  o.ratio = 0.5;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "hessian_input_activation needs --dataset");
  o = with_format(WeightScheme::kInt4Asym);
  o.group_size = 0;
  EXPECT_KILN_ERROR(resolve_recipe(o, 10), "--group-size must be positive or -1");
}

TEST(ExportRecipe, ParsesOptimumNames) {
  EXPECT_EQ(parse_weight_format("nf4"), WeightScheme::kNf4);
  EXPECT_EQ(parse_sensitivity_metric("mean_activation_magnitude"), SensitivityMetric::kMeanActivationMagnitude);
  EXPECT_EQ(parse_backup_precision("none"), BackupPrecision::kNone);
  EXPECT_KILN_ERROR(parse_weight_format("int3"), "--weight-format 'int3'", "fp32, fp16, bf16, int8, int4, nf4");
  EXPECT_KILN_ERROR(parse_backup_precision("fp8"), "int8_asym, int8_sym, none");
}

}  // namespace
}  // namespace kiln::exporter
