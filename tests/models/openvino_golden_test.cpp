// Oracle: OpenVINO itself on the same IR directories (tests/data/openvino/models, exported by
// optimum-cli and run by tools/make_openvino_models.py): its CPU plugin's f32 logits for the
// prompt, and its greedy continuation (OpenVINO GenAI's LLMPipeline, checked against a stepwise
// loop). An IR imported by kiln must give those logits to float rounding on the scalar f32
// device and through the compiled kernels with f32 activations, and, with the CPU device's
// defaults (int8 activations into integer kernels), within that rounding's reach; and
// OpenVINO's greedy tokens wherever its top-2 margin is clearer than the distance.
#include <gtest/gtest.h>

#include "greedy_follow.hpp"
#include "runtime/core.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"

namespace kiln::models {
namespace {

using golden::max_abs_diff;
using golden::run_and_follow;
using golden::Traced;

std::filesystem::path openvino_dir() { return kiln::testing::test_data_dir() / "openvino" / "models"; }

struct IrGolden {
  std::vector<std::int32_t> prompt_ids;
  std::vector<std::int64_t> positions;     // prompt positions whose logits OpenVINO recorded
  std::vector<std::vector<float>> logits;  // per recorded position
  std::vector<std::int32_t> greedy;        // OpenVINO GenAI's 16 greedy tokens
  std::vector<float> margins;              // OpenVINO's top-1 minus top-2 logit at each step
  // How far OpenVINO's own logits are from transformers' f32 on the weights the graph decodes
  // (its CPU plugin's summation order; 1e-3 for the stateless fp16 graph).
  float openvino_rounding = 0;
};

IrGolden ir_golden(const std::string& model) {
  static const Json all = read_json_file(openvino_dir() / "golden.json");
  const Json& g = all.at(model);
  EXPECT_TRUE(g["genai_matches_stepwise"].get<bool>()) << model;
  return {g["prompt_ids"].get<std::vector<std::int32_t>>(),
          g["logits_rows"]["positions"].get<std::vector<std::int64_t>>(),
          g["logits_rows"]["logits"].get<std::vector<std::vector<float>>>(),
          g["genai_greedy_ids"].get<std::vector<std::int32_t>>(),
          g["greedy_margins"].get<std::vector<float>>(),
          g["max_abs_diff"]["logits_vs_dequantized"].get<float>()};
}

// The recorded positions' rows of a run's prompt logits.
std::vector<std::vector<float>> recorded_rows(const Traced& run, const IrGolden& g) {
  std::vector<std::vector<float>> rows;
  for (std::int64_t p : g.positions) rows.push_back(run.prompt_logits.at(static_cast<std::size_t>(p)));
  return rows;
}

enum class Arithmetic { kReference, kCpuF32, kCpuDefault };

runtime::CompiledModel compile(const std::string& model, Arithmetic arithmetic, std::optional<Isa> isa) {
  runtime::DeviceProperties properties;
  if (arithmetic != Arithmetic::kReference) {
    properties.inference_num_threads = 1;
    properties.isa = isa;
  }
  if (arithmetic == Arithmetic::kCpuF32) {
    properties.dynamic_quantization_group_size = 0;
    properties.kv_cache_precision = ElementType::kF32;
  }
  return runtime::Core().read_and_compile(openvino_dir() / model,
                                          arithmetic == Arithmetic::kReference ? "REFERENCE" : "CPU", properties,
                                          {.context_tokens = 64, .max_sequences = 1, .block_size = 16});
}

struct OpenVinoCase {
  std::string model;
  // The kernels the CPU device runs it with: group 16 (phi3's export) is below the SIMD
  // kernels' 32 and runs on the scalar ones.
  // max |logit difference| of the CPU device's defaults from OpenVINO's f32 logits: int8
  // activations into integer kernels move these tiny random-weight models' logits by this much.
  float cpu_tolerance = 0.02f;
  std::optional<Isa> isa{};
};

void PrintTo(const OpenVinoCase& c, std::ostream* os) { *os << c.model; }

std::string openvino_case_name(const ::testing::TestParamInfo<OpenVinoCase>& info) {
  std::string name = info.param.model;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

class OpenVinoGolden : public ::testing::TestWithParam<OpenVinoCase> {};

// OpenVINO's f32 logits within `tolerance` (beyond OpenVINO's own rounding), and its greedy
// tokens for at least `min_steps` clear steps.
void expect_computes_what_openvino_computes(const OpenVinoCase& c, Arithmetic arithmetic, float tolerance,
                                            std::size_t min_steps) {
  const IrGolden g = ir_golden(c.model);
  runtime::CompiledModel compiled = compile(c.model, arithmetic, c.isa);
  tolerance += g.openvino_rounding;
  const Traced run = run_and_follow(*compiled.model, g.prompt_ids, g.greedy, g.margins, 2 * tolerance);
  EXPECT_LT(max_abs_diff(recorded_rows(run, g), g.logits), tolerance);
  EXPECT_GE(run.steps_compared, min_steps);
}

// The scalar f32 device computes what the graph computes, to float rounding (the goldens keep 7
// significant digits).
TEST_P(OpenVinoGolden, ReferenceDeviceComputesWhatOpenVinoComputes) {
  expect_computes_what_openvino_computes(GetParam(), Arithmetic::kReference, 2e-4f, 8);
}

// The compiled kernels with f32 activations and KV cache: the same, to their summation order.
TEST_P(OpenVinoGolden, KernelsWithF32ActivationsComputeWhatOpenVinoComputes) {
  expect_computes_what_openvino_computes(GetParam(), Arithmetic::kCpuF32, 2e-3f, 4);
}

// The CPU device's defaults (int8 activations into integer kernels, f16 KV cache for f16
// weights): within that rounding of OpenVINO's logits, and its greedy tokens where its choice is
// clearer than the distance.
TEST_P(OpenVinoGolden, CpuDeviceGeneratesWhatOpenVinoGenerates) {
  const IrGolden g = ir_golden(GetParam().model);
  runtime::CompiledModel compiled = compile(GetParam().model, Arithmetic::kCpuDefault, GetParam().isa);
  const float distance =
      max_abs_diff(recorded_rows(run_and_follow(*compiled.model, g.prompt_ids, {}, {}, 0), g), g.logits);
  EXPECT_LT(distance, GetParam().cpu_tolerance);
  compiled = compile(GetParam().model, Arithmetic::kCpuDefault, GetParam().isa);
  const Traced run = run_and_follow(*compiled.model, g.prompt_ids, g.greedy, g.margins, 2 * distance);
  std::cout << GetParam().model << ": CPU " << distance << " from OpenVINO's logits; " << run.steps_compared
            << " greedy steps clear enough to compare\n";
}

INSTANTIATE_TEST_SUITE_P(Models, OpenVinoGolden,
                         ::testing::Values(OpenVinoCase{"llama3_tiny-fp16"}, OpenVinoCase{"llama3_tiny-int8", 0.5f},
                                           OpenVinoCase{"llama3_tiny-int4-sym-g32", 0.5f},
                                           OpenVinoCase{"llama3_tiny-int4-asym-cw-r05", 0.5f},
                                           OpenVinoCase{"llama3_tiny-nf4", 0.1f},
                                           OpenVinoCase{"qwen2_tiny-int4-asym-g32", 0.5f},
                                           OpenVinoCase{"qwen3_tiny-int8-sym", 0.5f},
                                           OpenVinoCase{"mistral_tiny-fp16-stateless"},
                                           OpenVinoCase{"phi3_tiny-int4-sym-g16", 1.0f, Isa::kScalar}),
                         openvino_case_name);

}  // namespace
}  // namespace kiln::models
