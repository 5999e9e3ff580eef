// Oracles: a model compared with itself has KL exactly 0, agreement 1 and equal perplexities
// (identity); against a perturbed copy (PERTURBATION in tools/eval/make_eval_goldens.py, exact
// f32 multiplications by powers of two, rebuilt here bit for bit) the KL, agreement and both
// perplexities equal what transformers computes (tests/data/eval/goldens.json).
#include <gtest/gtest.h>

#include <cstring>

#include "eval/compare.hpp"
#include "eval_fixtures.hpp"
#include "ir/safetensors.hpp"

namespace kiln::eval {
namespace {

// Copies an f32 single-file checkpoint, multiplying the named tensors by their factors.
void write_perturbed_copy(const std::filesystem::path& src, const std::filesystem::path& dst, const Json& factors) {
  for (const auto& entry : std::filesystem::directory_iterator(src)) {
    if (entry.path().filename() != "model.safetensors")
      std::filesystem::copy(entry.path(), dst / entry.path().filename());
  }
  const ir::SafetensorsFile weights(src / "model.safetensors");
  std::vector<std::vector<std::uint8_t>> storage;
  std::vector<ir::SafetensorsEntry> entries;
  for (const auto& [name, t] : weights.tensors()) {
    storage.emplace_back(t.bytes.begin(), t.bytes.end());
    if (factors.contains(name)) {
      EXPECT_EQ(t.dtype, ElementType::kF32) << name;
      const float factor = factors[name].get<float>();
      for (std::size_t i = 0; i < storage.back().size(); i += 4) {
        float v;
        std::memcpy(&v, storage.back().data() + i, 4);
        v *= factor;
        std::memcpy(storage.back().data() + i, &v, 4);
      }
    }
  }
  std::size_t i = 0;
  for (const auto& [name, t] : weights.tensors()) entries.push_back({name, t.dtype, t.shape, storage[i++]});
  ir::write_safetensors(dst / "model.safetensors", entries);
}

std::vector<std::int32_t> heldout_ids(const genai::LoadedModel& m) {
  return encode_eval_text(m.tokenizer, testing::heldout_small_text());
}

TEST(Compare, AModelAgainstItselfHasNoDivergence) {
  const auto dir = testing::checkpoint_dir("llama3_tiny");
  genai::LoadedModel a = testing::load_for_eval(dir, 64);
  genai::LoadedModel b = testing::load_for_eval(dir, 64);
  const std::vector<std::int32_t> ids = heldout_ids(a);
  const CompareResult r =
      compare_models(*a.model, *b.model, std::span(ids).first(1500), 0, {.context = 64, .stride = 32});
  EXPECT_EQ(r.num_scored, 1499);
  EXPECT_EQ(r.mean_kl, 0.0);
  EXPECT_EQ(r.max_kl, 0.0);
  EXPECT_EQ(r.top1_agreement, 1.0);
  EXPECT_EQ(r.ppl_model, r.ppl_reference);
}

TEST(Compare, MatchesTransformersAgainstAPerturbedCopy) {
  const Json& g = testing::eval_goldens()["compare"];
  const auto src = testing::checkpoint_dir(g["checkpoint"].get<std::string>());
  testing::TempDir tmp;
  write_perturbed_copy(src, tmp.path(), g["perturbation"]);
  const std::int64_t context = g["context"].get<std::int64_t>();
  genai::LoadedModel reference = testing::load_for_eval(src, context);
  genai::LoadedModel model = testing::load_for_eval(tmp.path(), context);
  const std::vector<std::int32_t> ids = heldout_ids(reference);
  const CompareResult r = compare_models(*model.model, *reference.model, ids, 0,
                                         {.context = context, .stride = g["stride"].get<std::int64_t>()});
  EXPECT_EQ(r.num_scored, g["scored_tokens"].get<std::int64_t>());
  EXPECT_GT(r.mean_kl, 0.01);  // the perturbation is large enough to matter
  EXPECT_LT(testing::relative_error(r.mean_kl, g["mean_kl"].get<double>()), 1e-3) << r.mean_kl;
  // A near tie can flip between implementations: allow a few positions in ten thousand.
  EXPECT_NEAR(r.top1_agreement, g["top1_agreement"].get<double>(), 5e-4);
  EXPECT_LT(testing::relative_error(r.ppl_model, g["ppl_model"].get<double>()), 1e-4);
  EXPECT_LT(testing::relative_error(r.ppl_reference, g["ppl_reference"].get<double>()), 1e-4);
}

TEST(Compare, RejectsModelsWithDifferentVocabularies) {
  genai::LoadedModel a = testing::load_for_eval(testing::checkpoint_dir("llama3_tiny"), 32);
  genai::LoadedModel b = testing::load_for_eval(testing::checkpoint_dir("llama2_tiny"), 32);
  const std::vector<std::int32_t> ids{1, 2, 3, 4};
  EXPECT_KILN_ERROR(compare_models(*a.model, *b.model, ids, 0, {.context = 4, .stride = 2}), "512", "384");
}

}  // namespace
}  // namespace kiln::eval
