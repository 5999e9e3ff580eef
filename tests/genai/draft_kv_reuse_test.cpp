// A chat turn with a draft model finds both models' KV of the previous turns in their prefix
// caches. Oracles: the tokens each model is actually fed (a wrapper counts every position a step
// computes), so the second turn's prompt positions computed are exactly those after the cached
// prefix, in the main model and in the draft, and the cached prefixes cover the first turn's
// full blocks; the second turn's greedy output is plain greedy decoding of the same prompt
// (speculation is exact), with some candidates accepted and some rejected so the equality is not
// vacuous; without prefix caching the draft computes the whole prompt (the counter is not blind).
#include <gtest/gtest.h>

#include "../models/golden_checkpoint.hpp"
#include "genai/engine.hpp"
#include "test_models.hpp"

namespace kiln::genai {
namespace {

// Forwards to a model and records which positions each step computed.
class CountingModel : public models::LanguageModel {
 public:
  explicit CountingModel(models::LanguageModel& inner) : inner_(inner) {}

  const ir::ModelConfig& config() const override { return inner_.config(); }
  const models::KvCacheLayout& kv_cache_layout() const override { return inner_.kv_cache_layout(); }
  void step(std::span<const models::SequenceChunk> batch, models::StepOutput& out) override {
    for (const models::SequenceChunk& c : batch) {
      chunks_.push_back({c.num_cached, c.num_cached + static_cast<std::int64_t>(c.tokens.size())});
    }
    inner_.step(batch, out);
  }
  void copy_blocks(std::span<const models::KvBlockCopy> copies) override { inner_.copy_blocks(copies); }

  // Positions below `end` computed since the last reset (a position computed twice counts twice).
  std::int64_t positions_below(std::int64_t end) const {
    std::int64_t n = 0;
    for (const auto& [first, last] : chunks_) n += std::max<std::int64_t>(0, std::min(last, end) - first);
    return n;
  }
  void reset() { chunks_.clear(); }

 private:
  models::LanguageModel& inner_;
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks_;  // [first, last) positions per chunk
};

GenerationConfig speculative(std::int64_t new_tokens) {
  GenerationConfig c;
  c.max_new_tokens = new_tokens;
  c.ignore_eos = true;
  c.num_assistant_tokens = 4;
  return c;
}

std::vector<std::int32_t> generated(const Engine& engine, RequestId id) {
  const auto gen = engine.request(id).generated();
  return {gen.begin(), gen.end()};
}

TEST(DraftKvReuse, SecondChatTurnComputesOnlyItsNewTokensInBothModels) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto main = testing::load_test_model(g.dir);
  auto draft = testing::load_test_model(testing::draft_dir());
  const std::int64_t block = main.model->kv_cache_layout().block_size;
  CountingModel main_counter(*main.model), draft_counter(*draft.model);
  Engine engine(main_counter, EngineOptions{.draft_model = &draft_counter, .adaptive_speculation = false});

  // Turn 1: its blocks stay in both prefix caches after it ends.
  const std::vector<std::int32_t>& first_prompt = g.prompts[1].ids;
  const RequestId first = engine.add_request(first_prompt, speculative(12));
  engine.run_until_idle();
  std::vector<std::int32_t> second_prompt = first_prompt;
  const std::vector<std::int32_t> first_answer = generated(engine, first);
  engine.release(first);
  second_prompt.insert(second_prompt.end(), first_answer.begin(), first_answer.end());
  const auto first_turn = static_cast<std::int64_t>(second_prompt.size());

  // Turn 2: the history, then a new message.
  second_prompt.insert(second_prompt.end(), g.prompts[2].ids.begin() + 1, g.prompts[2].ids.end());
  const auto length = static_cast<std::int64_t>(second_prompt.size());
  main_counter.reset();
  draft_counter.reset();
  const RequestId second = engine.add_request(second_prompt, speculative(16));
  engine.run_until_idle();
  const RequestState& r = engine.request(second);
  // The main model computed every first-turn token but the last answer token (never fed); the
  // draft may also lag by the step that had no room left for candidates. Full blocks are cached.
  const std::int64_t main_cached = (first_turn - 1) / block * block;
  EXPECT_EQ(r.num_reused, main_cached);
  EXPECT_GE(r.speculation.num_draft_reused, (first_turn - 2) / block * block);
  EXPECT_LE(r.speculation.num_draft_reused, main_cached);
  EXPECT_EQ(main_counter.positions_below(length), length - main_cached);
  EXPECT_EQ(draft_counter.positions_below(length), length - r.speculation.num_draft_reused);
  EXPECT_EQ(r.speculation.num_draft_prefilled, length - r.speculation.num_draft_reused);
  EXPECT_GT(r.speculation.num_accepted, 0);
  EXPECT_LT(r.speculation.num_accepted, r.speculation.num_proposed);
  const std::vector<std::int32_t> answer = generated(engine, second);
  engine.release(second);

  // Oracle: plain greedy decoding of the whole second prompt.
  GenerationConfig plain = speculative(16);
  plain.num_assistant_tokens = 0;
  const RequestId reference = engine.add_request(second_prompt, plain);
  engine.run_until_idle();
  EXPECT_EQ(answer, generated(engine, reference));
  engine.release(reference);
  EXPECT_EQ(engine.num_free_kv_blocks(), main.model->kv_cache_layout().num_blocks);  // nothing leaked

  // Without prefix caching the draft computes every prompt position.
  Engine uncached(main_counter, EngineOptions{.scheduler = {.enable_prefix_caching = false},
                                              .draft_model = &draft_counter,
                                              .adaptive_speculation = false});
  draft_counter.reset();
  const RequestId fresh = uncached.add_request(second_prompt, speculative(16));
  uncached.run_until_idle();
  EXPECT_EQ(draft_counter.positions_below(length), length);
  EXPECT_EQ(generated(uncached, fresh), answer);
}

}  // namespace
}  // namespace kiln::genai
