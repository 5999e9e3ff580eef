// Oracle: with sampling, speculative decoding must leave the output distribution exactly the
// main model's p. Tested statistically with fixed seeds (deterministic, so never flaky):
// Pearson's chi-square of the observed token counts against p must stay below the 1e-4 upper
// quantile of its distribution — and, as a check that the test can fail, the same counts against
// the draft's distribution q must lie far above it.
//  - the verifier alone, on synthetic p and q (a draft proposal and a one-hot proposal);
//  - end to end: three sampled tokens (top_k 4: 64 outcomes) through the engine with the draft
//    model, against the exact joint distribution computed from the main model's logits;
//  - on the embedded pair (models/kiln-tiny + kiln-tiny-draft, CPU device): the first three
//    sampled tokens with the draft against those without it, a two-sample (homogeneity)
//    chi-square at the same 1e-4 quantile: a correct implementation would fail it for 1 in
//    10,000 seed sets, and the fixed seeds make the outcome deterministic. The draft model's
//    own samples must fail the same test against the main model's (the test has power).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "../models/golden_checkpoint.hpp"
#include "genai/candidate_verifier.hpp"
#include "genai/engine.hpp"
#include "kiln/llm_pipeline.hpp"
#include "test_models.hpp"

namespace kiln::genai {
namespace {

// Pearson's chi-square of `counts` (outcome → count) against `probs` (outcome → probability).
// Cells expecting fewer than 5 are pooled into one, as the test requires; an observed outcome of
// probability 0 makes the statistic infinite. Returns {statistic, degrees of freedom}.
template <typename Key>
std::pair<double, int> chi_square(const std::map<Key, int>& counts, const std::map<Key, double>& probs, int n) {
  std::set<Key> keys;
  for (const auto& kv : counts) keys.insert(kv.first);
  for (const auto& kv : probs) keys.insert(kv.first);
  double statistic = 0, pooled_expected = 0;
  int pooled_observed = 0, cells = 0;
  for (const Key& key : keys) {
    const double expected = probs.contains(key) ? probs.at(key) * n : 0.0;
    const int observed = counts.contains(key) ? counts.at(key) : 0;
    if (expected < 5) {
      pooled_expected += expected;
      pooled_observed += observed;
    } else {
      statistic += (observed - expected) * (observed - expected) / expected;
      ++cells;
    }
  }
  if (pooled_expected > 0) {
    statistic += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++cells;
  } else if (pooled_observed > 0) {
    statistic = std::numeric_limits<double>::infinity();
  }
  return {statistic, std::max(cells - 1, 1)};
}

// The 1e-4 upper quantile of chi-square with `dof` degrees of freedom (Wilson–Hilferty).
double chi_square_quantile_1e4(int dof) {
  const double z = 3.719;  // standard normal 1 - 1e-4 quantile
  const double k = dof;
  return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
}

std::vector<float> softmax(const std::vector<float>& logits) {
  std::vector<float> p(logits.size());
  const float top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(logits[i] - top);
  for (float& x : p) x = static_cast<float>(x / sum);
  return p;
}

TEST(SpeculativeSampling, VerifierEmitsTheMainDistribution) {
  const std::vector<float> main_logits{2.0f, 1.0f, 0.5f, -1.0f, 0.0f, 1.5f};
  const std::vector<float> q = softmax({0.0f, 2.5f, -1.0f, 1.0f, 0.5f, -0.5f});
  const std::vector<float> p = softmax(main_logits);
  GenerationConfig c;
  c.do_sample = true;
  c.rng_seed = 5;
  for (const bool one_hot : {false, true}) {
    Sampler sampler(c);
    std::mt19937_64 draft_rng(9);
    std::discrete_distribution<int> from_q(q.begin(), q.end());
    const int n = 40000;
    std::map<int, int> counts;
    for (int trial = 0; trial < n; ++trial) {
      // One candidate: drawn from q, or always token 1 for a deterministic (prompt-lookup) proposal.
      const std::int32_t candidate = one_hot ? 1 : from_q(draft_rng);
      std::vector<float> rows = main_logits;
      rows.insert(rows.end(), main_logits.begin(), main_logits.end());  // the bonus row (unused here)
      const std::vector<std::int32_t> tokens{0, candidate};
      const VerifiedTokens v = verify_candidates(
          sampler, {rows, 6, tokens, 1, 1, one_hot ? std::span<const float>() : std::span<const float>(q)}, 0);
      ++counts[v.tokens.front().token];
    }
    std::map<int, double> expected, draft;
    for (int t = 0; t < 6; ++t) {
      expected[t] = p[t];
      draft[t] = one_hot ? (t == 1 ? 1.0 : 0.0) : q[t];
    }
    const auto [stat, dof] = chi_square(counts, expected, n);
    EXPECT_LT(stat, chi_square_quantile_1e4(dof)) << "one_hot " << one_hot;
    const auto [against_q, dof_q] = chi_square(counts, draft, n);
    EXPECT_GT(against_q, 10 * chi_square_quantile_1e4(dof_q)) << "the test cannot tell p from q";
  }
}

// The exact probability of each 3-token continuation under `model` with `config`'s warpers.
std::map<std::array<std::int32_t, 3>, double> joint_distribution(models::LanguageModel& model,
                                                                 const std::vector<std::int32_t>& prompt,
                                                                 const GenerationConfig& config) {
  std::map<std::array<std::int32_t, 3>, double> out;
  Sampler sampler(config);
  models::StepOutput logits;
  std::vector<float> probs;
  const std::vector<std::int32_t> table = [&] {
    std::vector<std::int32_t> t(static_cast<std::size_t>(model.kv_cache_layout().num_blocks));
    std::iota(t.begin(), t.end(), 0);
    return t;
  }();
  // p(next | tokens) by a full forward pass over `tokens` (no cache reuse: simplest to trust).
  const auto next = [&](const std::vector<std::int32_t>& tokens) {
    const models::SequenceChunk chunk{tokens, 0, table, models::LogitsMode::kLast};
    model.step(std::span(&chunk, 1), logits);
    std::vector<float> row(logits.logits.begin(), logits.logits.begin() + logits.vocab_size);
    sampler.distribution(row, {tokens, static_cast<std::int64_t>(prompt.size())}, probs);
    return probs;
  };
  std::vector<std::int32_t> seq = prompt;
  const std::vector<float> p1 = next(seq);
  for (std::int32_t a = 0; a < static_cast<std::int32_t>(p1.size()); ++a) {
    if (p1[a] == 0) continue;
    seq.push_back(a);
    const std::vector<float> p2 = next(seq);
    for (std::int32_t b = 0; b < static_cast<std::int32_t>(p2.size()); ++b) {
      if (p2[b] == 0) continue;
      seq.push_back(b);
      const std::vector<float> p3 = next(seq);
      for (std::int32_t t = 0; t < static_cast<std::int32_t>(p3.size()); ++t) {
        if (p3[t] > 0) out[{a, b, t}] = double(p1[a]) * p2[b] * p3[t];
      }
      seq.pop_back();
    }
    seq.pop_back();
  }
  return out;
}

TEST(SpeculativeSampling, EngineWithDraftSamplesTheMainModelsJointDistribution) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto main = testing::load_test_model(g.dir);
  auto draft = testing::load_test_model(testing::draft_dir());
  const std::vector<std::int32_t>& prompt = g.prompts[0].ids;
  GenerationConfig c;
  c.do_sample = true;
  c.temperature = 1.5;  // flatter than the peaky random model: many outcomes, many rejections
  c.top_k = 4;
  c.max_new_tokens = 3;
  c.ignore_eos = true;
  c.num_assistant_tokens = 2;  // tokens 2 and 3 come from one speculative step
  std::map<std::array<std::int32_t, 3>, double> exact, draft_exact;
  {
    auto oracle = testing::load_test_model(g.dir);
    exact = joint_distribution(*oracle.model, prompt, c);
    auto draft_oracle = testing::load_test_model(testing::draft_dir());
    draft_exact = joint_distribution(*draft_oracle.model, prompt, c);
  }
  Engine engine(*main.model, EngineOptions{.draft_model = draft.model.get(), .adaptive_speculation = false});
  const int n = 6000;
  std::map<std::array<std::int32_t, 3>, int> counts;
  SpeculationStats stats;
  for (int seed = 0; seed < n; ++seed) {
    c.rng_seed = static_cast<std::uint64_t>(seed);
    const RequestId id = engine.add_request(prompt, c);
    engine.run_until_idle();
    const auto gen = engine.request(id).generated();
    ASSERT_EQ(gen.size(), 3u);
    ++counts[{gen[0], gen[1], gen[2]}];
    stats.num_proposed += engine.request(id).speculation.num_proposed;
    stats.num_accepted += engine.request(id).speculation.num_accepted;
    engine.release(id);
  }
  EXPECT_GT(stats.num_accepted, n / 4);                       // accepted candidates...
  EXPECT_LT(stats.num_accepted, stats.num_proposed - n / 4);  // ...and rejected ones
  const auto [stat, dof] = chi_square(counts, exact, n);
  EXPECT_LT(stat, chi_square_quantile_1e4(dof));
  const auto [against_draft, dof_draft] = chi_square(counts, draft_exact, n);
  EXPECT_GT(against_draft, chi_square_quantile_1e4(dof_draft)) << "the draft's distribution is indistinguishable";
}

// Two-sample chi-square (homogeneity) of outcome counts `a` and `b`: cells where either sample
// expects fewer than 5 are pooled into one. Returns {statistic, degrees of freedom}.
template <typename Key>
std::pair<double, int> homogeneity_chi_square(const std::map<Key, int>& a, const std::map<Key, int>& b) {
  std::set<Key> keys;
  for (const auto& kv : a) keys.insert(kv.first);
  for (const auto& kv : b) keys.insert(kv.first);
  double na = 0, nb = 0;
  for (const auto& kv : a) na += kv.second;
  for (const auto& kv : b) nb += kv.second;
  const double n = na + nb;
  double statistic = 0, pooled_a = 0, pooled_b = 0;
  int cells = 0;
  const auto add = [&](double oa, double ob) {
    const double ea = (oa + ob) * na / n, eb = (oa + ob) * nb / n;
    statistic += (oa - ea) * (oa - ea) / ea + (ob - eb) * (ob - eb) / eb;
    ++cells;
  };
  for (const Key& key : keys) {
    const double oa = a.contains(key) ? a.at(key) : 0, ob = b.contains(key) ? b.at(key) : 0;
    if ((oa + ob) * std::min(na, nb) / n < 5) {
      pooled_a += oa;
      pooled_b += ob;
    } else {
      add(oa, ob);
    }
  }
  if (pooled_a + pooled_b > 0) add(pooled_a, pooled_b);
  return {statistic, std::max(cells - 1, 1)};
}

// The first three sampled tokens of `n` generations with seeds 0..n-1.
std::map<std::array<std::int32_t, 3>, int> sample_counts(LLMPipeline& pipe, const GenerationConfig& config, int n) {
  std::map<std::array<std::int32_t, 3>, int> counts;
  GenerationConfig c = config;
  for (int seed = 0; seed < n; ++seed) {
    c.rng_seed = static_cast<std::uint64_t>(seed);
    const DecodedResults r = pipe.generate("Q: What does mmap do?\nA:", c);
    EXPECT_EQ(r.tokens[0].size(), 3u);
    if (r.tokens[0].size() == 3) ++counts[{r.tokens[0][0], r.tokens[0][1], r.tokens[0][2]}];
  }
  return counts;
}

TEST(SpeculativeSampling, EmbeddedPairWithDraftSamplesAsWithout) {
  const auto models = std::filesystem::path(KILN_SOURCE_DIR) / "models";
  PipelineProperties speculative;
  speculative.draft = draft_model(models / "kiln-tiny-draft");
  speculative.adaptive_speculation = false;  // speculate on every step, however it pays
  speculative.context_tokens = 64;
  PipelineProperties small;
  small.context_tokens = 64;
  LLMPipeline with_draft(models / "kiln-tiny", "CPU", speculative), main(models / "kiln-tiny", "CPU", small),
      draft_alone(models / "kiln-tiny-draft", "CPU", small);
  GenerationConfig c = main.get_generation_config();
  c.apply_chat_template = false;
  c.do_sample = true;
  c.temperature = 1.5;  // spread the mass: many outcomes, many rejections
  c.top_k = 4;
  c.top_p = 1.0;
  c.min_p = 0.0;
  c.max_new_tokens = 3;
  c.ignore_eos = true;
  GenerationConfig speculative_config = c;
  speculative_config.num_assistant_tokens = 2;  // tokens 2 and 3 come from one speculative step
  // 1500 samples each (~20 s on 2 cores): statistic 23 at 20 degrees of freedom against a 1e-4
  // quantile of 53; the draft alone is far off (2093 at 42 against 85 with 1500), so 400 do.
  const int n = 1500;
  const auto drafted = sample_counts(with_draft, speculative_config, n);
  const auto plain = sample_counts(main, c, n);
  const auto draft_only = sample_counts(draft_alone, c, 400);
  const auto [stat, dof] = homogeneity_chi_square(drafted, plain);
  EXPECT_LT(stat, chi_square_quantile_1e4(dof)) << "with the draft the samples are not the main model's";
  const auto [power, power_dof] = homogeneity_chi_square(draft_only, plain);
  EXPECT_GT(power, chi_square_quantile_1e4(power_dof))
      << "the test cannot tell the draft's samples from the main model's";
}

}  // namespace
}  // namespace kiln::genai
