// Locks in the ordering of quantisation quality (issue 5, "Quality"). Oracle: the float
// checkpoint's own next-token distributions on held-out man-page text; each export is scored by
// `kiln eval compare`'s measure (eval::compare_models: mean KL(original ‖ export) over one
// 96-token window; lower = closer to the original). Measured on the golden llama3_tiny
// checkpoint (random weights, |w| up to ~1, hidden 64, int4 sym group 32): RTN 0.577, AWQ 0.528,
// SE 0.506, AWQ+SE 0.515, GPTQ 0.423, ratio 0.8 0.443, int8 0.0042. The bounds leave a margin for
// nothing but deliberate algorithm changes: every recipe is deterministic.
// AWQ and SE score their choices on per-sample mean inputs (as NNCF): on the trained kiln-tiny that
// took AWQ+SE from 26% to 52% of the perplexity gap, on this random-weight model (no consistent
// activation means) from 22% to 11% of the KL gap, with AWQ+SE now slightly above SE alone; so
// here only "each closes part of the gap" is locked in, the trained-model ordering in BENCHMARKS.md.
// The issue's perplexity bars are measured on models/kiln-tiny (BENCHMARKS.md, "Export quality on
// kiln-tiny"); there the ordering only holds at 128 samples and the whole held-out file, which
// takes minutes (a calibrated export 30-70 s, one comparison ~60 s on 2 cores), so CI keeps this
// golden-model check.
#include <gtest/gtest.h>

#include <map>

#include "eval/compare.hpp"
#include "export_test_util.hpp"

namespace kiln::exporter {
namespace {

class QualityOrdering : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto model = testing::golden_checkpoint_dir("llama3_tiny");
    constexpr std::int64_t kTokens = 96;
    const std::vector<std::int32_t> ids = testing::heldout_ids(model, kTokens);
    // REFERENCE device on both sides: the export's rounding is what is measured, not the backend's.
    const genai::LoadOptions load{.context_tokens = kTokens, .device = "REFERENCE"};
    genai::LoadedModel reference = genai::load_model(model, load);
    testing::TempDir tmp;
    const auto score = [&](const std::string& name, auto configure) {
      ExportOptions o = testing::export_options(model, tmp.path() / name);
      configure(o);
      export_model(o);
      genai::LoadedModel exported = genai::load_model(tmp.path() / name, load);
      kl_[name] = eval::compare_models(*exported.model, *reference.model, ids, 0, {.context = kTokens, .stride = kTokens})
                      .mean_kl;
    };
    const auto int4 = [](ExportOptions& o) {
      o.weight_format = WeightFormat::kInt4;
      o.sym = true;
      o.group_size = 32;
    };
    const auto calibrated = [&](ExportOptions& o) {
      int4(o);
      o.dataset = "builtin";
      o.num_samples = 32;
      o.sample_tokens = 64;
    };
    score("int8", [](ExportOptions& o) { o.weight_format = WeightFormat::kInt8; });
    score("rtn", int4);
    score("ratio_0.8", [&](ExportOptions& o) { int4(o); o.ratio = 0.8; });
    score("awq", [&](ExportOptions& o) { calibrated(o); o.awq = true; });
    score("se", [&](ExportOptions& o) { calibrated(o); o.scale_estimation = true; });
    score("awq_se", [&](ExportOptions& o) { calibrated(o); o.awq = o.scale_estimation = true; });
    score("gptq", [&](ExportOptions& o) { calibrated(o); o.gptq = true; });
    for (const auto& [name, kl] : kl_) std::printf("KL %-10s %.5f\n", name.c_str(), kl);
  }
  // Fraction of the int4 RTN → int8 gap a recipe closes.
  static double gap_closed(const std::string& name) {
    return (kl_.at("rtn") - kl_.at(name)) / (kl_.at("rtn") - kl_.at("int8"));
  }
  static inline std::map<std::string, double> kl_;
};

TEST_F(QualityOrdering, Int8IsFarCloserThanInt4) { EXPECT_LT(kl_.at("int8"), 0.05 * kl_.at("rtn")); }

TEST_F(QualityOrdering, RatioLandsBetweenInt4AndInt8) {
  EXPECT_LT(kl_.at("ratio_0.8"), kl_.at("rtn"));
  EXPECT_GT(kl_.at("ratio_0.8"), kl_.at("int8"));
}

TEST_F(QualityOrdering, AwqAndScaleEstimationEachCloseSomeOfTheGap) {
  EXPECT_LT(kl_.at("awq"), kl_.at("rtn"));
  EXPECT_LT(kl_.at("se"), kl_.at("rtn"));
  EXPECT_GE(gap_closed("se"), 0.1);
  EXPECT_GE(gap_closed("awq_se"), 0.08) << "issue 5 asks 25% of the perplexity gap on kiln-tiny (52% measured)";
}

TEST_F(QualityOrdering, GptqClosesAQuarterOfTheGap) { EXPECT_GE(gap_closed("gptq"), 0.2); }

}  // namespace
}  // namespace kiln::exporter
