// Oracle: transformers' beam search (tests/data/genai/beam_search_golden.json, made by
// tools/make_generation_golden.py) on the golden checkpoints, over num_beams, length_penalty,
// early_stopping (true / false / "never") and num_return_sequences, with EOS ids that end
// hypotheses at different lengths: the engine must return the same hypotheses, in the same
// order, with the same scores (within f32 rounding). Forked beams share KV blocks, so a wrong
// copy-on-write would show up here as diverging hypotheses. Every KV block returns to the pool.
#include <gtest/gtest.h>

#include "genai/engine.hpp"
#include "test_models.hpp"
#include "util/json.hpp"

namespace kiln::genai {
namespace {

TEST(BeamSearch, MatchesTransformers) {
  const Json golden = read_json_file(testing::test_data_dir() / "genai" / "beam_search_golden.json");
  ASSERT_FALSE(golden["records"].empty());
  for (const Json& r : golden["records"]) {
    auto m = testing::load_test_model(testing::checkpoint_dir(r["checkpoint"].get<std::string>()), 64, 4);
    Engine engine(*m.model);
    GenerationConfig c;
    c.num_beams = r["num_beams"].get<std::int64_t>();
    c.length_penalty = r["length_penalty"].get<double>();
    c.early_stopping = parse_stop_criteria(r["early_stopping"].get<std::string>());
    c.num_return_sequences = r["num_return_sequences"].get<std::int64_t>();
    c.max_new_tokens = r["max_new_tokens"].get<std::int64_t>();
    for (std::int32_t eos : r["eos_token_ids"]) c.eos_token_ids.insert(eos);
    const std::string name = fmt::format("{} beams={} lp={} early={}", r["checkpoint"].get<std::string>(), c.num_beams,
                                         c.length_penalty, r["early_stopping"].get<std::string>());
    const RequestId id = engine.add_request(r["prompt_ids"].get<std::vector<std::int32_t>>(), c);
    engine.run_until_idle();
    const RequestState& state = engine.request(id);
    ASSERT_EQ(state.sequences.size(), r["hypotheses"].size()) << name;
    for (std::size_t i = 0; i < state.sequences.size(); ++i) {
      const Json& h = r["hypotheses"][i];
      const Sequence& s = *state.sequences[i];
      const std::vector<std::int32_t> generated(s.tokens.begin() + state.num_prompt, s.tokens.end());
      EXPECT_EQ(generated, h["generated_ids"].get<std::vector<std::int32_t>>()) << name << " hypothesis " << i;
      EXPECT_NEAR(s.score, h["score"].get<double>(), 1e-4) << name << " hypothesis " << i;
    }
    engine.release(id);
    EXPECT_EQ(engine.num_free_kv_blocks(), 64) << name;
  }
}

TEST(BeamSearch, SurvivesPreemptionAndChunking) {
  // The first golden case again with a KV cache too small for all beams at once and a 3-token
  // step budget: beams are preempted, recomputed and forked from recomputed parents.
  const Json golden = read_json_file(testing::test_data_dir() / "genai" / "beam_search_golden.json");
  const Json& r = golden["records"][0];
  auto m = testing::load_test_model(testing::checkpoint_dir(r["checkpoint"].get<std::string>()), 12, 4);
  Engine engine(*m.model, sched::SchedulerConfig{.max_num_batched_tokens = 3, .max_num_seqs = 64});
  GenerationConfig c;
  c.num_beams = r["num_beams"].get<std::int64_t>();
  c.length_penalty = r["length_penalty"].get<double>();
  c.early_stopping = parse_stop_criteria(r["early_stopping"].get<std::string>());
  c.num_return_sequences = r["num_return_sequences"].get<std::int64_t>();
  c.max_new_tokens = r["max_new_tokens"].get<std::int64_t>();
  for (std::int32_t eos : r["eos_token_ids"]) c.eos_token_ids.insert(eos);
  const RequestId id = engine.add_request(r["prompt_ids"].get<std::vector<std::int32_t>>(), c);
  engine.run_until_idle();
  const RequestState& state = engine.request(id);
  ASSERT_EQ(state.sequences.size(), r["hypotheses"].size());
  for (std::size_t i = 0; i < state.sequences.size(); ++i) {
    const Sequence& s = *state.sequences[i];
    EXPECT_EQ(std::vector<std::int32_t>(s.tokens.begin() + state.num_prompt, s.tokens.end()),
              r["hypotheses"][i]["generated_ids"].get<std::vector<std::int32_t>>())
        << i;
  }
}

TEST(BeamSearch, RejectsStreaming) {
  auto m = testing::load_test_model(testing::checkpoint_dir("llama3_tiny"));
  Engine engine(*m.model);
  GenerationConfig c;
  c.num_beams = 2;
  c.max_new_tokens = 4;
  EXPECT_KILN_ERROR(engine.add_request({1, 2, 3}, c, [](std::int32_t) { return StreamingStatus::RUNNING; }),
                    "streaming needs a single sequence", "num_beams");
}

}  // namespace
}  // namespace kiln::genai
