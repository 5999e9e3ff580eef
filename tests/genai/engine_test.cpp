// Oracles: transformers' greedy continuations on the golden checkpoints (a request through the
// engine must reproduce them exactly), and invariance: the same requests give the same tokens
// alone, batched together, with a tiny prefill budget (chunked prefill), and with a KV cache
// so small that sequences are preempted and recomputed.
#include "genai/engine.hpp"

#include <gtest/gtest.h>

#include "../models/golden_checkpoint.hpp"
#include "models/model_factory.hpp"
#include "runtime/reference/reference_ops.hpp"

namespace kiln::genai {
namespace {

std::unique_ptr<models::LanguageModel> model_with(const testing::GoldenCheckpoint& g, std::int64_t num_blocks,
                                                  std::int64_t block_size = 4) {
  models::KvCacheLayout kv;
  kv.num_blocks = num_blocks;
  kv.block_size = block_size;
  return models::create_language_model(g.checkpoint->config(), g.checkpoint, std::make_unique<runtime::ReferenceOps>(),
                                       kv);
}

GenerationConfig greedy(std::int64_t n) {
  GenerationConfig c;
  c.max_new_tokens = n;
  c.ignore_eos = true;
  return c;
}

std::vector<std::vector<std::int32_t>> run_all(Engine& engine, const testing::GoldenCheckpoint& g, GenerationConfig c) {
  std::vector<RequestId> ids;
  for (const auto& p : g.prompts) ids.push_back(engine.add_request(p.ids, c));
  engine.run_until_idle();
  std::vector<std::vector<std::int32_t>> out;
  for (RequestId id : ids) {
    const auto gen = engine.request(id).generated();
    out.emplace_back(gen.begin(), gen.end());
  }
  return out;
}

TEST(Engine, BatchedGreedyMatchesTransformers) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto model = model_with(g, 128);
  Engine engine(*model);
  const auto outputs = run_all(engine, g, greedy(32));
  for (std::size_t i = 0; i < g.prompts.size(); ++i)
    EXPECT_EQ(outputs[i], g.prompts[i].greedy_ids) << g.prompts[i].prompt;
}

TEST(Engine, ChunkedPrefillAndPreemptionDoNotChangeTokens) {
  const auto g = testing::load_golden_checkpoint("llama2_tiny");
  // 5 prompts of up to ~25 tokens + 32 new ≈ 15 blocks each of 4 tokens; 20 blocks forces
  // preemption, a budget of 7 tokens forces chunked prefill.
  auto model = model_with(g, 20);
  Engine engine(*model, {.max_num_batched_tokens = 7, .max_num_seqs = 3});
  const auto outputs = run_all(engine, g, greedy(32));
  for (std::size_t i = 0; i < g.prompts.size(); ++i)
    EXPECT_EQ(outputs[i], g.prompts[i].greedy_ids) << g.prompts[i].prompt;
}

TEST(Engine, StopsOnEosStopTokensCallbackAndLength) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto model = model_with(g, 64);
  Engine engine(*model);
  const auto& p = g.prompts[0];
  // The 5th greedy token as EOS: generation ends there and the EOS is not streamed.
  GenerationConfig c = greedy(32);
  c.ignore_eos = false;
  c.eos_token_ids = {p.greedy_ids[4]};
  std::vector<std::int32_t> streamed;
  RequestId id = engine.add_request(p.ids, c, [&](std::int32_t t) {
    streamed.push_back(t);
    return StreamingStatus::RUNNING;
  });
  engine.run_until_idle();
  EXPECT_EQ(engine.request(id).finish_reason, GenerationFinishReason::STOP);
  EXPECT_EQ(engine.request(id).num_generated(), 5);
  EXPECT_EQ(streamed, std::vector<std::int32_t>(p.greedy_ids.begin(), p.greedy_ids.begin() + 4));

  c = greedy(32);
  c.stop_token_ids = {p.greedy_ids[2]};
  id = engine.add_request(p.ids, c);
  engine.run_until_idle();
  EXPECT_EQ(engine.request(id).num_generated(), 3);

  int calls = 0;
  id = engine.add_request(p.ids, greedy(32), [&](std::int32_t) {
    return ++calls == 6 ? StreamingStatus::CANCEL : StreamingStatus::RUNNING;
  });
  engine.run_until_idle();
  EXPECT_EQ(engine.request(id).finish_reason, GenerationFinishReason::CANCEL);
  EXPECT_EQ(engine.request(id).num_generated(), 6);

  id = engine.add_request(p.ids, greedy(7));
  engine.run_until_idle();
  EXPECT_EQ(engine.request(id).finish_reason, GenerationFinishReason::LENGTH);
  EXPECT_EQ(engine.request(id).num_generated(), 7);
}

TEST(Engine, RejectsPromptsThatDoNotFit) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto model = model_with(g, 2);  // 8 tokens of KV
  Engine engine(*model);
  EXPECT_EQ(engine.max_context_tokens(), 8);
  EXPECT_KILN_ERROR(engine.add_request(g.prompts[1].ids, greedy(4)), "tokens, but the context holds 8");
  EXPECT_KILN_ERROR(engine.add_request({}, greedy(4)), "prompt is empty");
  EXPECT_KILN_ERROR(engine.add_request({999999}, greedy(4)), "outside the vocabulary");
  GenerationConfig stop_beyond = greedy(4);
  stop_beyond.stop_token_ids = {999999};
  EXPECT_KILN_ERROR(engine.add_request({g.prompts[0].ids[0]}, stop_beyond), "stop_token_ids", "outside the vocabulary");
  // A request that fits generates to the end of the context and stops with kLength.
  const RequestId id = engine.add_request({g.prompts[0].ids[0], g.prompts[0].ids[1]}, greedy(100));
  engine.run_until_idle();
  EXPECT_EQ(engine.request(id).num_generated(), 6);
  EXPECT_EQ(engine.request(id).finish_reason, GenerationFinishReason::LENGTH);
}

// A scoring request (RequestOptions::on_prompt_logits) beside a generating one. Oracle: one full
// forward of the prompt straight through the model (LogitsMode::kAll), which the rows must equal
// wherever the chunks fall; no chunk may straddle the first scored position, and the request ends
// with LENGTH having generated nothing while the other request's tokens stay transformers'.
TEST(Engine, ScoringRequestReportsPromptLogitsInChunks) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto model = model_with(g, 64);
  const std::vector<std::int32_t>& prompt = g.prompts[1].ids;
  const auto n = static_cast<std::int64_t>(prompt.size());
  const std::int64_t vocab = model->config().vocab_size;
  models::StepOutput full;
  {
    std::vector<std::int32_t> table(16);
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::int32_t>(48 + i);
    const models::SequenceChunk all{prompt, 0, table, models::LogitsMode::kAll};
    model->step(std::span(&all, 1), full);
  }
  Engine engine(*model, {.max_num_batched_tokens = 5, .max_num_seqs = 2});
  const std::int64_t from = 3;
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks;  // (first position, rows)
  RequestOptions options;
  options.prompt_logits_from = from;
  options.on_prompt_logits = [&](std::int64_t first, std::span<const float> rows) {
    const auto num_rows = static_cast<std::int64_t>(rows.size()) / vocab;
    chunks.emplace_back(first, num_rows);
    for (std::int64_t r = 0; r < num_rows; ++r) {
      for (std::int64_t v = 0; v < vocab; ++v) {
        ASSERT_NEAR(rows[static_cast<std::size_t>(r * vocab + v)], full.row(first + r)[static_cast<std::size_t>(v)],
                    1e-5f);
      }
    }
  };
  const RequestId scored = engine.add_request(prompt, greedy(4), std::move(options));
  const RequestId generating = engine.add_request(g.prompts[0].ids, greedy(32));
  engine.run_until_idle();
  std::int64_t next = from;
  for (auto [first, rows] : chunks) {
    EXPECT_EQ(first, next);
    next += rows;
  }
  EXPECT_EQ(next, n);  // every position from `from` on, the last prompt token included, once
  EXPECT_EQ(engine.request(scored).finish_reason, GenerationFinishReason::LENGTH);
  EXPECT_EQ(engine.request(scored).num_generated(), 0);
  const auto tokens = engine.request(generating).generated();
  EXPECT_EQ(std::vector<std::int32_t>(tokens.begin(), tokens.end()), g.prompts[0].greedy_ids);

  const auto scoring_from = [](std::int64_t position) {
    RequestOptions o;
    o.prompt_logits_from = position;
    o.on_prompt_logits = [](std::int64_t, std::span<const float>) {};
    return o;
  };
  EXPECT_KILN_ERROR(engine.add_request(prompt, greedy(4), scoring_from(n)), "prompt logits from position");
  GenerationConfig beams = greedy(4);
  beams.num_beams = 2;
  EXPECT_KILN_ERROR(engine.add_request(prompt, beams, scoring_from(0)), "a scoring request is one plain sequence");
}

// cached_prefix_tokens (what orders requests that arrive together) answers what the request
// will then find. Oracle: the request's own num_reused once it runs.
TEST(Engine, CachedPrefixTokensForeseeWhatARequestReuses) {
  const auto g = testing::load_golden_checkpoint("llama3_tiny");
  auto model = model_with(g, 64);
  Engine engine(*model);
  std::vector<std::int32_t> prompt = g.prompts[1].ids;
  EXPECT_EQ(engine.cached_prefix_tokens(prompt), 0);
  const RequestId first = engine.add_request(prompt, greedy(9));
  engine.run_until_idle();
  const auto answer = engine.request(first).generated();
  prompt.insert(prompt.end(), answer.begin(), answer.end());
  engine.release(first);
  const std::int64_t foreseen = engine.cached_prefix_tokens(prompt);
  EXPECT_EQ(foreseen, (static_cast<std::int64_t>(prompt.size()) - 1) / 4 * 4);  // all but the last token
  EXPECT_EQ(engine.cached_prefix_tokens(std::vector<std::int32_t>(prompt.begin(), prompt.begin() + 3)), 0);
  const RequestId second = engine.add_request(prompt, greedy(2));
  engine.run_until_idle();
  EXPECT_EQ(engine.request(second).num_reused, foreseen);
  Engine uncached(*model, {.enable_prefix_caching = false});
  EXPECT_EQ(uncached.cached_prefix_tokens(prompt), 0);
}

}  // namespace
}  // namespace kiln::genai
