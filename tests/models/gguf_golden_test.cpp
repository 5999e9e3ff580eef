// Oracle: llama.cpp itself (through llama-cpp-python) on the same GGUF files, and Hugging Face
// transformers on the checkpoints they were converted from (tests/data/gguf/models, made by
// tools/make_gguf_models.py). A GGUF imported by kiln must give llama.cpp's prompt logits within
// the noise of llama.cpp's own arithmetic (it rounds activations to f16 or 8 bits inside its
// matrix products and keeps its KV cache in f16) and its greedy continuation, token for token,
// up to the first step where llama.cpp's own top-2 margin is inside that noise. The f16 files
// must also give transformers' logits within f16 weight rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "golden_checkpoint.hpp"
#include "greedy_follow.hpp"
#include "runtime/core.hpp"
#include "util/file_io.hpp"

namespace kiln::models {
namespace {

using golden::max_abs_diff;
using golden::run_and_follow;
using golden::Traced;

// One model file's goldens: llama.cpp's, and transformers' in f32 on the weights the file
// defines (decoded by gguf-py, q/k un-permuted), the exact oracle for a reader of the file.
struct FileGolden {
  std::vector<std::int32_t> prompt_ids;
  std::vector<std::vector<float>> llama_cpp_logits;  // [prompt position][vocab]
  std::vector<std::int32_t> llama_cpp_greedy;
  std::vector<float> llama_cpp_margins;  // top-1 minus top-2 logit at each greedy step
  std::vector<std::vector<float>> exact_logits;
  std::vector<std::int32_t> exact_greedy;
  std::vector<float> exact_margins;
};

std::filesystem::path gguf_dir() { return testing::test_data_dir() / "gguf" / "models"; }

FileGolden file_golden(const std::string& file) {
  static const Json all = read_json_file(gguf_dir() / "golden.json");
  const Json& g = all.at(file);
  using Ids = std::vector<std::int32_t>;
  using Rows = std::vector<std::vector<float>>;
  return {g["prompt_ids"].get<Ids>(),
          g["prompt_logits"].get<Rows>(),
          g["greedy_ids"].get<Ids>(),
          g["greedy_margins"].get<std::vector<float>>(),
          g["dequantized_logits"].get<Rows>(),
          g["dequantized_greedy_ids"].get<Ids>(),
          g["dequantized_greedy_margins"].get<std::vector<float>>()};
}

runtime::CompiledModel compile(const std::string& file, const std::string& device,
                               WeightScheme requantize = WeightScheme::kInt8Asym, bool exact_arithmetic = false) {
  runtime::DeviceProperties properties;
  if (device == "CPU") properties.inference_num_threads = 1;
  if (exact_arithmetic) {  // f32 activations into integer kernels, f32 KV cache
    properties.dynamic_quantization_group_size = 0;
    properties.kv_cache_precision = ElementType::kF32;
  }
  properties.gguf_requantize = requantize;
  return runtime::Core().read_and_compile(gguf_dir() / file, device, properties,
                                          {.context_tokens = 64, .max_sequences = 1, .block_size = 16});
}

struct GgufCase {
  std::string file;
  // max |logit difference| of the compiled CPU device from the exact oracle: its int8
  // activations for integer weights (DYNAMIC_QUANTIZATION_GROUP_SIZE) and the default int8
  // re-quantisation of types kiln cannot hold exactly move these tiny models' logits by up to
  // this (ktiny's random weights amplify any rounding: llama.cpp's own lands as far away).
  float cpu_tolerance;
};

void PrintTo(const GgufCase& c, std::ostream* os) { *os << c.file; }

std::string gguf_case_name(const ::testing::TestParamInfo<GgufCase>& info) {
  std::string name = info.param.file;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

class GgufGolden : public ::testing::TestWithParam<GgufCase> {};

// The scalar f32 device, with every tensor kiln cannot hold exactly decoded to f32
// (GGUF_REQUANTIZE=f32), computes what the file defines: transformers' f32 logits on the decoded
// weights, to float rounding (the goldens keep 6 significant digits).
TEST_P(GgufGolden, ReferenceDeviceComputesWhatTheFileDefines) {
  const FileGolden g = file_golden(GetParam().file);
  runtime::CompiledModel compiled = compile(GetParam().file, "REFERENCE", WeightScheme::kF32);
  constexpr float kTolerance = 2e-4f;
  const Traced run = run_and_follow(*compiled.model, g.prompt_ids, g.exact_greedy, g.exact_margins, 2 * kTolerance);
  EXPECT_LT(max_abs_diff(run.prompt_logits, g.exact_logits), kTolerance);
  EXPECT_GE(run.steps_compared, 1u);
}

// The compiled CPU device with its defaults, against the exact oracle within its rounding, and
// against llama.cpp itself (8-bit or f16 activations, f16 KV): the same greedy tokens wherever
// llama.cpp's own choice is clearer than the two runtimes' distance from the exact logits.
TEST_P(GgufGolden, CpuDeviceGeneratesWhatLlamaCppGenerates) {
  const FileGolden g = file_golden(GetParam().file);
  runtime::CompiledModel compiled = compile(GetParam().file, "CPU");
  const Traced probe = run_and_follow(*compiled.model, g.prompt_ids, {}, {}, 0);
  const float cpu = max_abs_diff(probe.prompt_logits, g.exact_logits);
  EXPECT_LT(cpu, GetParam().cpu_tolerance);
  const float noise = cpu + max_abs_diff(g.llama_cpp_logits, g.exact_logits);
  compiled = compile(GetParam().file, "CPU");
  const Traced run = run_and_follow(*compiled.model, g.prompt_ids, g.llama_cpp_greedy, g.llama_cpp_margins, 2 * noise);
  std::cout << GetParam().file << ": CPU " << cpu << " from the exact logits, llama.cpp "
            << max_abs_diff(g.llama_cpp_logits, g.exact_logits) << "; " << run.steps_compared
            << " greedy steps clear enough to compare\n";
}

INSTANTIATE_TEST_SUITE_P(
    Files, GgufGolden,
    ::testing::Values(GgufCase{"llama3_tiny.f16.gguf", 0.02f}, GgufCase{"qwen2_tiny.f16.gguf", 0.02f},
                      GgufCase{"qwen3_tiny.f16.gguf", 0.02f}, GgufCase{"mistral_tiny.f16.gguf", 0.02f},
                      GgufCase{"llama3_tiny.q8_0.gguf", 0.5f}, GgufCase{"llama3_tiny.q4_0.gguf", 0.5f},
                      GgufCase{"llama3_tiny.q4_1.gguf", 0.5f}, GgufCase{"ktiny.q4_k_m.gguf", 3.0f},
                      GgufCase{"ktiny.q5_k_m.gguf", 3.0f}, GgufCase{"ktiny.q6_k.gguf", 3.0f}),
    gguf_case_name);

// Files kiln holds exactly (F16, Q8_0, Q4_0 become f16, int8_sym and int4_sym group 32): the
// compiled kernels with f32 activations and KV compute what the file defines, to float rounding of the
// kernels' own summation order.
class GgufExactOnCpu : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufExactOnCpu, KernelsWithF32ActivationsComputeWhatTheFileDefines) {
  const FileGolden g = file_golden(GetParam());
  runtime::CompiledModel compiled = compile(GetParam(), "CPU", WeightScheme::kInt8Asym, /*exact_arithmetic=*/true);
  constexpr float kTolerance = 2e-3f;
  const Traced run = run_and_follow(*compiled.model, g.prompt_ids, g.exact_greedy, g.exact_margins, 2 * kTolerance);
  EXPECT_LT(max_abs_diff(run.prompt_logits, g.exact_logits), kTolerance);
  EXPECT_GE(run.steps_compared, 1u);
}

INSTANTIATE_TEST_SUITE_P(Files, GgufExactOnCpu,
                         ::testing::Values("llama3_tiny.f16.gguf", "qwen2_tiny.f16.gguf", "qwen3_tiny.f16.gguf",
                                           "mistral_tiny.f16.gguf", "llama3_tiny.q8_0.gguf", "llama3_tiny.q4_0.gguf"));

// With a CACHE_DIR a GGUF is imported once, kept as kiln's IR, and mapped from there on: the
// same logits as the direct import, and a new entry when the file or the import option changes.
TEST(GgufImportCache, LaterLoadsMapTheImportAndComputeTheSame) {
  const testing::TempDir cache;
  const std::string file = "llama3_tiny.q4_1.gguf";
  const FileGolden g = file_golden(file);
  const auto prompt_logits = [&](const std::filesystem::path& cache_dir, WeightScheme requantize) {
    runtime::DeviceProperties properties;
    properties.inference_num_threads = 1;
    properties.cache_dir = cache_dir;
    properties.gguf_requantize = requantize;
    runtime::CompiledModel compiled = runtime::Core().read_and_compile(
        gguf_dir() / file, "CPU", properties, {.context_tokens = 64, .max_sequences = 1, .block_size = 16});
    return run_and_follow(*compiled.model, g.prompt_ids, {}, {}, 0).prompt_logits;
  };
  const auto imports = [&] {
    std::vector<std::filesystem::path> dirs;
    for (const auto& e : std::filesystem::directory_iterator(cache.path())) {
      if (e.path().string().ends_with("-gguf")) dirs.push_back(e.path());
    }
    return dirs;
  };
  const auto direct = prompt_logits({}, WeightScheme::kInt8Asym);
  EXPECT_EQ(prompt_logits(cache.path(), WeightScheme::kInt8Asym), direct);
  ASSERT_EQ(imports().size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(imports()[0] / "model.json"));
  EXPECT_EQ(prompt_logits(cache.path(), WeightScheme::kInt8Asym), direct);  // mapped from the import
  EXPECT_EQ(imports().size(), 1u);
  prompt_logits(cache.path(), WeightScheme::kInt4Asym);
  EXPECT_EQ(imports().size(), 2u);
}

// The f16 files against transformers on the source checkpoints (f32 weights): within what
// rounding the weights to f16 moves the logits. Mistral's and Qwen2's checkpoints slide an
// 8-token window that their GGUFs do not carry, so only rows that see no more than 8 tokens count.
class GgufTransformersGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufTransformersGolden, F16FileGivesTransformersLogits) {
  const testing::GoldenCheckpoint golden = testing::load_golden_checkpoint(GetParam());
  runtime::CompiledModel compiled = compile(GetParam() + ".f16.gguf", "REFERENCE");
  const std::int64_t vocab = compiled.config.vocab_size;
  const std::vector<std::int32_t> blocks = {0, 1, 2, 3};
  for (const testing::GoldenPrompt& p : golden.prompts) {
    if (p.ids.size() > 64) continue;
    const SequenceChunk chunk{p.ids, 0, blocks, LogitsMode::kAll};
    StepOutput out;
    compiled.model->step({&chunk, 1}, out);
    const std::int64_t rows = golden.checkpoint->config().sliding_window > 0
                                  ? std::min<std::int64_t>(out.num_rows, golden.checkpoint->config().sliding_window)
                                  : out.num_rows;
    for (std::int64_t r = 0; r < rows; ++r) {
      EXPECT_LT(max_abs_diff(out.row(r), std::span(p.logits).subspan(static_cast<std::size_t>(r * vocab), vocab)),
                0.05f)
          << p.prompt << ", position " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, GgufTransformersGolden,
                         ::testing::Values("llama3_tiny", "qwen2_tiny", "qwen3_tiny", "mistral_tiny"));

}  // namespace
}  // namespace kiln::models
