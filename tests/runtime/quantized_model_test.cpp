// Compressed IRs on the compiled CPU device. Oracle: the reference backend (scalar, double
// accumulation, weights dequantised to f32) on the same IR, with the inputs of int4/int8
// weights passed through int8 codes per activation group as the kernels quantise them
// (RoundedReferenceOps); KV f32, so the cache rounds nothing. Every recipe the exporter offers
// for the layers (int4 sym/asym at groups of 32 and per channel, int8 sym/asym per channel; the
// tied head stays int8), with activations quantised in groups of 32 (the default), in one group
// per row, and not at all (f32), on every ISA this CPU has. Tolerances, max or mean |Δlogit|
// over every prompt position (logits O(1); measured on AVX2 and scalar in brackets):
//   f32 activations: max 1e-4 [2e-5]: only accumulation order differs.
//   int8 activations: mean 1e-2 [4.3e-3], max 0.25 [0.10]. In 93 of 100 prompt runs the two
//     agree to 1e-5; in the others one activation lay within an ulp of a code boundary and
//     rounded to the neighbouring code on one side, which these random weights amplify. Without
//     the activation rounding in the oracle the mean is 3.3e-2 to 7e-2 (max 0.18 to 1.06).
#include <gtest/gtest.h>

#include <cmath>

#include "../models/golden_checkpoint.hpp"
#include "export/exporter.hpp"
#include "genai/model_loader.hpp"
#include "runtime_test_util.hpp"

namespace kiln::runtime {
namespace {

struct Recipe {
  const char* name;
  WeightScheme format;
  bool sym;
  std::int64_t group_size;  // -1: per channel
};

constexpr Recipe kRecipes[] = {
    {"int4_sym_g32", WeightScheme::kInt4Asym, true, 32},     {"int4_asym_g32", WeightScheme::kInt4Asym, false, 32},
    {"int4_sym_channel", WeightScheme::kInt4Asym, true, -1}, {"int8_sym", WeightScheme::kInt8Asym, true, -1},
    {"int8_asym", WeightScheme::kInt8Asym, false, -1},
};

struct QuantizedCase {
  Recipe recipe;
  Isa isa;
  std::int64_t act_group_size;  // DYNAMIC_QUANTIZATION_GROUP_SIZE
};

class QuantizedVsReference : public ::testing::TestWithParam<QuantizedCase> {};

double mean_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += std::fabs(a[i] - b[i]);
  return sum / static_cast<double>(a.size());
}

TEST_P(QuantizedVsReference, FullForwardLogits) {
  const QuantizedCase& c = GetParam();
  if (!isa_supported(c.isa)) GTEST_SKIP() << "ISA " << isa_name(c.isa) << " not on this CPU";
  const kiln::testing::GoldenCheckpoint golden = kiln::testing::load_golden_checkpoint("llama3_tiny");
  kiln::testing::TempDir tmp;
  exporter::ExportOptions o;
  o.model_dir = golden.dir;
  o.out_dir = tmp.path() / "ir";
  o.show_progress = false;
  o.kiln_version = "test";
  o.weight_format = c.recipe.format;
  o.sym = c.recipe.sym;
  o.group_size = c.recipe.group_size;
  exporter::export_model(o);

  DeviceProperties properties;
  properties.isa = c.isa;
  properties.inference_num_threads = 2;
  properties.kv_cache_precision = ElementType::kF32;
  properties.dynamic_quantization_group_size = c.act_group_size;
  genai::LoadedModel compiled = genai::load_model(
      o.out_dir,
      {.context_tokens = 256, .max_sequences = 2, .block_size = 4, .device = "CPU", .properties = properties});
  auto oracle = testing::rounded_reference(compiled.model->config(), compiled.weights, ElementType::kF32,
                                           static_cast<std::size_t>(c.act_group_size));
  for (const kiln::testing::GoldenPrompt& prompt : golden.prompts) {
    const std::vector<float> got = testing::full_forward(*compiled.model, prompt.ids);
    const std::vector<float> want = testing::full_forward(*oracle, prompt.ids);
    if (c.act_group_size == 0) {
      EXPECT_LT(testing::max_abs_diff(got, want), 1e-4f) << prompt.prompt;
      continue;
    }
    EXPECT_LT(mean_abs_diff(got, want), 1e-2) << prompt.prompt;
    EXPECT_LT(testing::max_abs_diff(got, want), 0.25f) << prompt.prompt;
  }
}

std::vector<QuantizedCase> recipe_cases() {
  std::vector<QuantizedCase> cases;
  for (const Recipe& recipe : kRecipes) {
    for (const Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
      for (const std::int64_t act_group : {32, 1024, 0}) cases.push_back({recipe, isa, act_group});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Recipes, QuantizedVsReference, ::testing::ValuesIn(recipe_cases()), [](const auto& info) {
  const QuantizedCase& c = info.param;
  return std::string(c.recipe.name) + "_" + std::string(isa_name(c.isa)) + "_act_" +
         (c.act_group_size == 0 ? std::string("f32") : "g" + std::to_string(c.act_group_size));
});

}  // namespace
}  // namespace kiln::runtime
