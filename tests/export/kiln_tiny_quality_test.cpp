// Locks in the export quality bars on the embedded model models/kiln-tiny with their measure:
// held-out perplexity (eval::evaluate_perplexity) of the whole man-page file (46,011 tokens), the
// default calibration (builtin, 128 samples of 128 tokens, on the CPU backend as `kiln export`
// runs it). Oracle: the f16 checkpoint's perplexity on the same windows. Bars: int8 within 1% of
// f16; int4_sym g128 AWQ + scale estimation and GPTQ each close at least 25% of the gap RTN
// leaves; `--ratio 0.8` strictly between RTN and int8. Measured (AVX2): f16 27.223, int8 27.226,
// ratio 0.8 27.414, RTN 27.466, AWQ + SE 27.389 (32% of the gap), GPTQ 27.365 (42%).
// NOTE: the bars hold only on the whole file (on its last third AWQ + SE closes 13%), so the cost
// is cut elsewhere: the compiled CPU device with f32 KV and f32 activations into int4/int8 weights
// (REFERENCE's perplexity to 1e-8 on the file's first 957 tokens, 15x faster; the default int8
// activations move RTN's perplexity by 4% of the gap there); windows without overlap, so each token
// is computed once; one thread, so ctest -j2 does not oversubscribe. ~3 CPU-minutes on 2 cores.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "eval/perplexity.hpp"
#include "export/cpu_calibration_backend.hpp"
#include "export_test_util.hpp"

namespace kiln::exporter {
namespace {

constexpr std::int64_t kContextTokens = 512;  // the model's positions

double heldout_perplexity(const std::filesystem::path& dir, const std::string& text) {
  runtime::DeviceProperties exact;
  exact.inference_num_threads = 1;
  exact.kv_cache_precision = ElementType::kF32;
  exact.dynamic_quantization_group_size = 0;
  genai::LoadedModel m =
      genai::load_model(dir, {.context_tokens = kContextTokens, .device = "CPU", .properties = exact});
  return eval::evaluate_perplexity(*m.model, m.tokenizer, text, {.context = kContextTokens, .stride = kContextTokens})
      .ppl;
}

TEST(KilnTinyQuality, MeetsPerplexityBars) {
  const auto model = testing::embedded_model_dir();
  const std::string text = read_file(testing::test_data_dir() / "heldout" / "manpages-heldout.txt");
  testing::TempDir tmp;
  std::map<std::string, double> ppl;
  ppl["f16"] = heldout_perplexity(model, text);
  const auto score = [&](const std::string& name, auto configure) {
    ExportOptions o = testing::export_options(model, tmp.path() / name);
    configure(o);
    export_model(o, cpu_calibration_backend(model));
    ppl[name] = heldout_perplexity(tmp.path() / name, text);
  };
  const auto int4_g128 = [](ExportOptions& o) {
    o.weight_format = WeightScheme::kInt4Asym;
    o.sym = true;
    o.group_size = 128;
  };
  const auto calibrated = [&](ExportOptions& o) {
    int4_g128(o);
    o.dataset = "builtin";  // the defaults: 128 samples of 128 tokens
  };
  score("int8", [](ExportOptions& o) { o.weight_format = WeightScheme::kInt8Asym; });
  score("rtn", int4_g128);
  score("ratio_0.8", [&](ExportOptions& o) {
    int4_g128(o);
    o.ratio = 0.8;
  });
  score("awq_se", [&](ExportOptions& o) {
    calibrated(o);
    o.awq = o.scale_estimation = true;
  });
  score("gptq", [&](ExportOptions& o) {
    calibrated(o);
    o.gptq = true;
  });
  // Share of the perplexity RTN adds over f16 that a recipe takes back.
  const auto gap_closed = [&](const std::string& name) {
    return (ppl.at("rtn") - ppl.at(name)) / (ppl.at("rtn") - ppl.at("f16"));
  };
  for (const auto& [name, p] : ppl)
    std::printf("perplexity %-10s %.4f (gap closed %.3f)\n", name.c_str(), p, gap_closed(name));

  EXPECT_LT(ppl.at("int8"), 1.01 * ppl.at("f16"));
  EXPECT_GE(gap_closed("awq_se"), 0.25);
  EXPECT_GE(gap_closed("gptq"), 0.25);
  EXPECT_LT(ppl.at("ratio_0.8"), ppl.at("rtn"));
  EXPECT_GT(ppl.at("ratio_0.8"), ppl.at("int8"));
}

}  // namespace
}  // namespace kiln::exporter
