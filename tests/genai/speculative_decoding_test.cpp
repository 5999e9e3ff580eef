// Oracles: (0) the draft's chunked catch-up leaves its KV cache as one prefill does: after it,
// the draft's candidates are its own greedy continuation (plain decoding of the draft model);
// (1) greedy speculative decoding — with a draft model at any number of candidates or
// a confidence threshold, with prompt lookup, under chunked prefill and preemption — emits
// exactly plain greedy decoding's tokens (themselves transformers' greedy continuations, the
// golden ids); (2) both paths of the verifier ran: some candidates were accepted and some
// rejected, so the equality is not vacuous.
#include <gtest/gtest.h>

#include "../models/golden_checkpoint.hpp"
#include "genai/draft_proposer.hpp"
#include "genai/engine.hpp"
#include "test_models.hpp"

namespace kiln::genai {
namespace {

GenerationConfig greedy(std::int64_t n) {
  GenerationConfig c;
  c.max_new_tokens = n;
  c.ignore_eos = true;
  return c;
}

std::vector<std::int32_t> generate(Engine& engine, const std::vector<std::int32_t>& prompt, const GenerationConfig& c,
                                   SpeculationStats* stats = nullptr) {
  const RequestId id = engine.add_request(prompt, c);
  engine.run_until_idle();
  const auto gen = engine.request(id).generated();
  std::vector<std::int32_t> tokens(gen.begin(), gen.end());  // before release frees what gen views
  if (stats) {
    stats->num_proposed += engine.request(id).speculation.num_proposed;
    stats->num_accepted += engine.request(id).speculation.num_accepted;
  }
  engine.release(id);
  return tokens;
}

TEST(SpeculativeDecoding, ChunkedDraftCatchUpProposesTheDraftsGreedyContinuation) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto draft = testing::load_test_model(testing::draft_dir());
  const std::vector<std::int32_t>& prompt = g.prompts[1].ids;
  std::vector<std::int32_t> draft_greedy;
  {
    Engine plain(*draft.model);
    draft_greedy = generate(plain, prompt, greedy(4));
  }
  DraftProposer proposer(*draft.model, draft.model->config().vocab_size);
  const GenerationConfig c = greedy(8);
  RequestState request(c);
  request.num_prompt = static_cast<std::int64_t>(prompt.size());
  kv::BlockPool main_pool(8);
  for (const std::int64_t chunk : {1, 3, 7, 100}) {
    Sequence s(kv::BlockTable(main_pool, 4));
    s.tokens = prompt;
    s.draft = proposer.make_state(c);
    // Chunks until only the last prompt token is left; the proposal computes that one.
    while (proposer.catch_up(std::vector<DraftProposer::CatchUp>{{&s, chunk}}) > 0) {}
    EXPECT_EQ(s.draft->num_computed, static_cast<std::int64_t>(prompt.size()) - 1) << "chunk " << chunk;
    std::vector<DraftProposer::Slot> slots{{&s, &request, 4}};
    proposer.propose(slots);
    ASSERT_EQ(s.num_candidates, 4) << "chunk " << chunk;
    EXPECT_EQ(std::vector<std::int32_t>(s.tokens.end() - 4, s.tokens.end()), draft_greedy) << "chunk " << chunk;
  }
}

TEST(SpeculativeDecoding, GreedyWithDraftEqualsPlainGreedy) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto main = testing::load_test_model(g.dir);
  auto draft = testing::load_test_model(testing::draft_dir());
  Engine engine(*main.model, EngineOptions{.draft_model = draft.model.get(), .adaptive_speculation = false});
  for (const std::int64_t k : {1, 3, 5, 8}) {
    SpeculationStats stats;
    GenerationConfig c = greedy(32);
    c.num_assistant_tokens = k;
    for (const auto& p : g.prompts)
      EXPECT_EQ(generate(engine, p.ids, c, &stats), p.greedy_ids) << "k=" << k << " " << p.prompt;
    EXPECT_GT(stats.num_accepted, 0) << "k=" << k;
    EXPECT_LT(stats.num_accepted, stats.num_proposed) << "k=" << k;
  }
  GenerationConfig c = greedy(32);
  c.assistant_confidence_threshold = 0.4;
  SpeculationStats stats;
  for (const auto& p : g.prompts)
    EXPECT_EQ(generate(engine, p.ids, c, &stats), p.greedy_ids) << "threshold " << p.prompt;
  EXPECT_GT(stats.num_proposed, 0);
}

TEST(SpeculativeDecoding, GreedyEqualsPlainUnderChunkingAndPreemption) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  // 24 blocks of 4 tokens cannot hold five ~40-token sequences at once, and 3 tokens per step
  // cut both prompts and candidate chunks.
  auto main = testing::load_test_model(g.dir, 24);
  auto draft = testing::load_test_model(testing::draft_dir(), 24);
  Engine engine(*main.model, EngineOptions{.scheduler = {.max_num_batched_tokens = 3, .max_num_seqs = 4},
                                           .draft_model = draft.model.get(),
                                           .adaptive_speculation = false});
  GenerationConfig c = greedy(32);
  c.num_assistant_tokens = 4;
  std::vector<RequestId> ids;
  for (const auto& p : g.prompts) ids.push_back(engine.add_request(p.ids, c));
  engine.run_until_idle();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto gen = engine.request(ids[i]).generated();
    EXPECT_EQ(std::vector<std::int32_t>(gen.begin(), gen.end()), g.prompts[i].greedy_ids) << g.prompts[i].prompt;
  }
}

TEST(SpeculativeDecoding, PromptLookupEqualsPlainGreedy) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto main = testing::load_test_model(g.dir);
  Engine engine(*main.model, EngineOptions{.adaptive_speculation = false});
  SpeculationStats stats;
  for (const auto& p : g.prompts) {
    // The prompt twice, then its greedy continuation: n-grams recur, so lookups find candidates.
    std::vector<std::int32_t> prompt = p.ids;
    prompt.insert(prompt.end(), p.ids.begin() + 1, p.ids.end());
    const std::vector<std::int32_t> plain = generate(engine, prompt, greedy(24));
    for (const std::int64_t n : {1, 2, 3}) {
      GenerationConfig c = greedy(24);
      c.max_ngram_size = n;
      c.num_assistant_tokens = 4;
      EXPECT_EQ(generate(engine, prompt, c, &stats), plain) << "max_ngram_size " << n << " " << p.prompt;
    }
  }
  EXPECT_GT(stats.num_proposed, 0);
  EXPECT_GT(stats.num_accepted, 0);
  EXPECT_LT(stats.num_accepted, stats.num_proposed);
}

TEST(SpeculativeDecoding, StopsInsideAnAcceptedRunExactlyAsPlainDecoding) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto main = testing::load_test_model(g.dir);
  auto draft = testing::load_test_model(testing::draft_dir());
  Engine engine(*main.model, EngineOptions{.draft_model = draft.model.get(), .adaptive_speculation = false});
  const auto& p = g.prompts[1];
  for (std::size_t stop_at : {std::size_t{3}, std::size_t{10}, std::size_t{17}}) {
    GenerationConfig c = greedy(32);
    c.num_assistant_tokens = 6;
    c.ignore_eos = false;
    c.eos_token_ids = {p.greedy_ids[stop_at]};
    // Plain decoding stops at the first occurrence of that token, which it records.
    const auto first = std::find(p.greedy_ids.begin(), p.greedy_ids.end(), p.greedy_ids[stop_at]);
    const std::vector<std::int32_t> expected(p.greedy_ids.begin(), first + 1);
    EXPECT_EQ(generate(engine, p.ids, c), expected) << stop_at;
    c.eos_token_ids.clear();
    c.max_new_tokens = static_cast<std::int64_t>(stop_at);
    EXPECT_EQ(generate(engine, p.ids, c),
              std::vector<std::int32_t>(p.greedy_ids.begin(), p.greedy_ids.begin() + stop_at));
  }
  EXPECT_EQ(engine.num_free_kv_blocks(), main.model->kv_cache_layout().num_blocks);  // nothing leaked
}

TEST(SpeculativeDecoding, ConfigNeedsADraftModel) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto main = testing::load_test_model(g.dir);
  Engine engine(*main.model);
  GenerationConfig c = greedy(4);
  c.num_assistant_tokens = 3;
  EXPECT_KILN_ERROR(engine.add_request(g.prompts[0].ids, c), "num_assistant_tokens", "draft model");
}

}  // namespace
}  // namespace kiln::genai
