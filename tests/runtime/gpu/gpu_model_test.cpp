// The GPU backend's whole forward pass against the reference, on the golden checkpoints, on
// whatever OpenCL device the machine has (PoCL's CPU device in CI). Oracle: the reference
// backend rounding what the GPU rounds by design (RoundedReferenceOps: K/V through the cache's
// element type, bf16 matrices' inputs through bf16), held to the CPU backend's tolerances; on the
// exact path (KV f32, f32 / f16 weights) greedy continuations equal transformers'.
#include <gtest/gtest.h>

#include <numeric>

#include "../runtime_test_util.hpp"
#include "export/exporter.hpp"
#include "genai/model_loader.hpp"
#include "gpu_test_util.hpp"
#include "support/test_support.hpp"

namespace kiln::runtime {
namespace {

using kiln::testing::GoldenCheckpoint;

// Program binaries shared by every compile of the test: the second model onwards loads them.
const std::filesystem::path& program_cache() {
  static const kiln::testing::TempDir dir;
  return dir.path();
}

CompiledModel compile_gpu(const GoldenCheckpoint& g, ElementType kv) {
  return Core().compile_model(g.checkpoint->config(), g.checkpoint, "GPU",
                              {.kv_cache_precision = kv, .cache_dir = program_cache()},
                              {.context_tokens = 256, .max_sequences = 2, .block_size = 4});
}

struct Case {
  std::string checkpoint;
  ElementType kv;
};

class GpuVsReference : public ::testing::TestWithParam<Case> {};

TEST_P(GpuVsReference, FullForwardLogits) {
  KILN_REQUIRE_GPU(gpu);
  const Case& c = GetParam();
  const GoldenCheckpoint g = kiln::testing::load_golden_checkpoint(c.checkpoint);
  CompiledModel compiled = compile_gpu(g, c.kv);
  auto oracle = testing::rounded_reference(g.checkpoint->config(), g.checkpoint, c.kv);
  for (const auto& p : g.prompts) {
    const std::vector<float> got = testing::full_forward(*compiled.model, p.ids);
    const std::vector<float> want = testing::full_forward(*oracle, p.ids);
    EXPECT_LT(testing::max_abs_diff(got, want), testing::golden_tolerance(g, c.kv)) << "prompt: " << p.prompt;
  }
}

class GpuGreedyVsTransformers : public GpuVsReference {};

TEST_P(GpuGreedyVsTransformers, GreedyContinuationMatchesTransformers) {
  KILN_REQUIRE_GPU(gpu);
  const GoldenCheckpoint g = kiln::testing::load_golden_checkpoint(GetParam().checkpoint);
  CompiledModel compiled = compile_gpu(g, ElementType::kF32);
  for (const auto& p : g.prompts) {
    EXPECT_EQ(testing::greedy(*compiled.model, p.ids, p.greedy_ids.size()), p.greedy_ids) << "prompt: " << p.prompt;
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const std::string& name : kiln::testing::golden_checkpoint_names()) {
    for (ElementType kv : {ElementType::kF32, ElementType::kF16, ElementType::kU8}) cases.push_back({name, kv});
  }
  return cases;
}

std::vector<Case> exact_cases() {
  std::vector<Case> cases;
  for (const std::string& name : kiln::testing::golden_checkpoint_names()) {
    if (!testing::bf16_weights(kiln::testing::load_golden_checkpoint(name))) cases.push_back({name, ElementType::kF32});
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.checkpoint + "_kv_" + std::string(kv_precision_name(info.param.kv));
}

INSTANTIATE_TEST_SUITE_P(Goldens, GpuVsReference, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Goldens, GpuGreedyVsTransformers, ::testing::ValuesIn(exact_cases()), case_name);

// Compressed IRs: the GPU dequantises int4 / int8 / nf4 weights in the matmul and multiplies f32
// activations, so against the reference on the same IR only accumulation order differs.
struct Recipe {
  const char* name;
  WeightScheme format;
  bool sym;
  std::int64_t group_size;  // -1: per channel
};

class GpuQuantized : public ::testing::TestWithParam<Recipe> {};

TEST_P(GpuQuantized, FullForwardLogitsMatchTheReferenceOnTheSameIr) {
  KILN_REQUIRE_GPU(gpu);
  const Recipe& r = GetParam();
  const GoldenCheckpoint golden = kiln::testing::load_golden_checkpoint("llama3_tiny");
  const kiln::testing::TempDir tmp;
  exporter::ExportOptions o;
  o.model_dir = golden.dir;
  o.out_dir = tmp.path() / "ir";
  o.show_progress = false;
  o.kiln_version = "test";
  o.weight_format = r.format;
  o.sym = r.sym;
  o.group_size = r.group_size;
  exporter::export_model(o);
  genai::LoadedModel compiled = genai::load_model(
      o.out_dir, {.context_tokens = 256,
                  .max_sequences = 2,
                  .block_size = 4,
                  .device = "GPU",
                  .properties = {.kv_cache_precision = ElementType::kF32, .cache_dir = program_cache()}});
  auto oracle = testing::rounded_reference(compiled.model->config(), compiled.weights, ElementType::kF32);
  for (const kiln::testing::GoldenPrompt& prompt : golden.prompts) {
    EXPECT_LT(testing::max_abs_diff(testing::full_forward(*compiled.model, prompt.ids),
                                    testing::full_forward(*oracle, prompt.ids)),
              1e-4f)
        << prompt.prompt;
  }
}

INSTANTIATE_TEST_SUITE_P(Recipes, GpuQuantized,
                         ::testing::Values(Recipe{"int4_sym_g32", WeightScheme::kInt4Asym, true, 32},
                                           Recipe{"int4_asym_g32", WeightScheme::kInt4Asym, false, 32},
                                           Recipe{"int4_asym_channel", WeightScheme::kInt4Asym, false, -1},
                                           Recipe{"int8_sym", WeightScheme::kInt8Asym, true, -1},
                                           Recipe{"int8_asym", WeightScheme::kInt8Asym, false, -1},
                                           Recipe{"nf4_g32", WeightScheme::kNf4, false, 32}),
                         [](const auto& info) { return std::string(info.param.name); });

// Imported files as they are: GGUF (Q4_0 and Q8_0 kept bit for bit, Q4_1 and K-quants re-quantised
// on import) and optimum-cli's OpenVINO IRs (NNCF's int4 / int8 / nf4 layouts), against the
// reference on the same file.
class GpuImported : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuImported, FullForwardLogitsMatchTheReferenceOnTheSameFile) {
  KILN_REQUIRE_GPU(gpu);
  const std::filesystem::path model = kiln::testing::test_data_dir() / GetParam();
  const auto load = [&](const char* device) {
    return genai::load_model(
        model, {.context_tokens = 128,
                .max_sequences = 1,
                .block_size = 4,
                .device = device,
                .properties = {.kv_cache_precision = ElementType::kF32,
                               .cache_dir = std::string(device) == "GPU" ? program_cache() : std::filesystem::path()}});
  };
  genai::LoadedModel on_gpu = load("GPU");
  genai::LoadedModel reference = load("REFERENCE");
  const std::vector<std::int32_t> ids{1, 17, 42, 99, 7, 3, 250, 11, 64, 5};
  EXPECT_LT(
      testing::max_abs_diff(testing::full_forward(*on_gpu.model, ids), testing::full_forward(*reference.model, ids)),
      1e-4f);
}

INSTANTIATE_TEST_SUITE_P(Files, GpuImported,
                         ::testing::Values("gguf/models/llama3_tiny.q4_0.gguf", "gguf/models/llama3_tiny.q4_1.gguf",
                                           "gguf/models/llama3_tiny.q8_0.gguf", "gguf/models/ktiny.q4_k_m.gguf",
                                           "openvino/models/llama3_tiny-int4-asym-cw-r05",
                                           "openvino/models/llama3_tiny-nf4", "openvino/models/qwen3_tiny-int8-sym",
                                           "openvino/models/phi3_tiny-int4-sym-g16"),
                         [](const auto& info) {
                           std::string name = std::filesystem::path(info.param).filename().string();
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(GpuModel, ChunksAndBatchesAgreeWithFullForward) {
  KILN_REQUIRE_GPU(gpu);
  const GoldenCheckpoint g = kiln::testing::load_golden_checkpoint("llama3_tiny");
  CompiledModel compiled = compile_gpu(g, ElementType::kF32);
  EXPECT_EQ(compiled.info.device, "GPU.0");
  EXPECT_GT(compiled.info.kv_cache_bytes, 0u);
  testing::expect_chunks_and_batches_agree(*compiled.model, g.prompts.front().ids);
}

// A block copied (as a beam fork does) reads like its original: decoding the next token over
// the copy gives the original's logits, in every KV precision.
TEST(GpuModel, CopiedBlocksReadLikeTheOriginals) {
  KILN_REQUIRE_GPU(gpu);
  const GoldenCheckpoint g = kiln::testing::load_golden_checkpoint("qwen2_tiny");
  const std::vector<std::int32_t>& ids = g.prompts.front().ids;
  for (ElementType kv : {ElementType::kF32, ElementType::kF16, ElementType::kU8}) {
    CompiledModel compiled = compile_gpu(g, kv);
    const auto blocks = static_cast<std::int32_t>((ids.size() + 4) / 4);  // block_size 4, room for one more
    std::vector<std::int32_t> original(static_cast<std::size_t>(blocks)), copy(original.size());
    std::iota(original.begin(), original.end(), 0);
    std::iota(copy.begin(), copy.end(), blocks);
    const std::span<const std::int32_t> prompt(ids);
    const models::SequenceChunk prefill{prompt.first(ids.size() - 1), 0, original, models::LogitsMode::kLast};
    models::StepOutput out;
    compiled.model->step({&prefill, 1}, out);
    std::vector<models::KvBlockCopy> copies;
    for (std::int32_t b = 0; b < blocks; ++b) copies.push_back({original[b], copy[b]});
    compiled.model->copy_blocks(copies);
    const auto last = static_cast<std::int64_t>(ids.size()) - 1;
    const models::SequenceChunk on_original{prompt.last(1), last, original, models::LogitsMode::kLast};
    compiled.model->step({&on_original, 1}, out);
    const std::vector<float> want = out.logits;
    const models::SequenceChunk on_copy{prompt.last(1), last, copy, models::LogitsMode::kLast};
    compiled.model->step({&on_copy, 1}, out);
    EXPECT_EQ(out.logits, want) << kv_precision_name(kv);
  }
}

// The second load of a model compiles no kernel: every program comes from CACHE_DIR.
TEST(GpuModel, SecondLoadTakesEveryProgramFromTheCache) {
  KILN_REQUIRE_GPU(gpu);
  const GoldenCheckpoint g = kiln::testing::load_golden_checkpoint("qwen3_tiny");
  const kiln::testing::TempDir cache;
  const auto compile = [&] {
    return Core().compile_model(g.checkpoint->config(), g.checkpoint, "GPU", {.cache_dir = cache.path()},
                                {.context_tokens = 64, .block_size = 4});
  };
  const CompiledModel first = compile();
  EXPECT_GE(first.info.programs_compiled, 3u);  // element-wise, one matmul per scheme, attention
  EXPECT_EQ(first.info.programs_cached, 0u);
  const CompiledModel second = compile();
  EXPECT_EQ(second.info.programs_compiled, 0u);
  EXPECT_EQ(second.info.programs_cached, first.info.programs_compiled);
}

TEST(GpuModel, RefusesWhatItCannotRun) {
  KILN_REQUIRE_GPU(gpu);
  const GoldenCheckpoint g = kiln::testing::load_golden_checkpoint("llama3_tiny");
  const KvCacheRequest kv{.context_tokens = 64, .block_size = 4};
  EXPECT_KILN_ERROR(Core().compile_model(g.checkpoint->config(), g.checkpoint, "GPU", {.inference_num_threads = 2}, kv),
                    "INFERENCE_NUM_THREADS does not apply to the GPU device");
  EXPECT_KILN_ERROR(
      Core().compile_model(g.checkpoint->config(), g.checkpoint, "GPU", {.kv_cache_precision = ElementType::kBf16}, kv),
      "f32, f16 or u8, not bf16");
  EXPECT_KILN_ERROR(Core().compile_model(g.checkpoint->config(), g.checkpoint, "GPU.7", {}, kv),
                    "'GPU.7' does not exist");
}

}  // namespace
}  // namespace kiln::runtime
