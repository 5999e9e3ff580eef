// Oracle: Hugging Face transformers (LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,
// MistralForCausalLM with an 8-position sliding window, Phi3ForCausalLM with fused projections,
// LongRoPE and partial rotary) on the same tiny checkpoints (f32 compute; tools/make_golden.py). The reference forward
// must reproduce its logits within 1e-3 (max abs) and its 32-token greedy continuations exactly; chunked and batched
// steps must agree with a single full forward (an identity of the paged KV cache).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "golden_checkpoint.hpp"
#include "greedy_follow.hpp"
#include "models/model_factory.hpp"
#include "runtime/reference/reference_ops.hpp"

namespace kiln::models {
namespace {

using golden::argmax;
using golden::max_abs_diff;

using testing::GoldenCheckpoint;
using testing::GoldenPrompt;

constexpr float kLogitsTolerance = 1e-3f;

std::unique_ptr<LanguageModel> reference_model(const GoldenCheckpoint& g, std::int64_t num_blocks = 128) {
  KvCacheLayout kv;
  kv.block_size = 4;  // small, so every prompt spans several blocks
  kv.num_blocks = num_blocks;
  return create_language_model(g.checkpoint->config(), g.checkpoint, std::make_unique<runtime::ReferenceOps>(), kv);
}

std::vector<std::int32_t> iota_blocks(std::int32_t first, std::int32_t count) {
  std::vector<std::int32_t> blocks(static_cast<std::size_t>(count));
  std::iota(blocks.begin(), blocks.end(), first);
  return blocks;
}

class LlamaGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { golden_ = testing::load_golden_checkpoint(GetParam()); }
  GoldenCheckpoint golden_;
};

TEST_P(LlamaGolden, FullForwardLogitsMatchTransformers) {
  auto model = reference_model(golden_);
  const std::int64_t vocab = model->config().vocab_size;
  for (const auto& p : golden_.prompts) {
    const auto blocks = iota_blocks(0, 32);
    const SequenceChunk chunk{p.ids, 0, blocks, LogitsMode::kAll};
    StepOutput out;
    model->step({&chunk, 1}, out);
    ASSERT_EQ(out.num_rows, static_cast<std::int64_t>(p.ids.size()));
    ASSERT_EQ(out.logits.size(), p.ids.size() * static_cast<std::size_t>(vocab));
    EXPECT_LT(max_abs_diff(out.logits, p.logits), kLogitsTolerance) << "prompt: " << p.prompt;
  }
}

TEST_P(LlamaGolden, GreedyContinuationMatchesTransformers) {
  auto model = reference_model(golden_);
  for (const auto& p : golden_.prompts) {
    const auto blocks = iota_blocks(0, 32);
    std::vector<std::int32_t> tokens = p.ids;
    SequenceChunk chunk{tokens, 0, blocks, LogitsMode::kLast};
    StepOutput out;
    model->step({&chunk, 1}, out);
    std::vector<std::int32_t> generated;
    for (std::size_t i = 0; i < p.greedy_ids.size(); ++i) {
      const std::int32_t next = argmax(out.row(0));
      generated.push_back(next);
      tokens.push_back(next);
      chunk = {std::span(tokens).last(1), static_cast<std::int64_t>(tokens.size()) - 1, blocks, LogitsMode::kLast};
      model->step({&chunk, 1}, out);
    }
    EXPECT_EQ(generated, p.greedy_ids) << "prompt: " << p.prompt;
  }
}

TEST_P(LlamaGolden, ChunkedPrefillEqualsOneStep) {
  auto model = reference_model(golden_);
  const std::int64_t vocab = model->config().vocab_size;
  const auto& p = golden_.prompts[1];  // the longest English prompt
  const auto blocks = iota_blocks(0, 32);
  std::vector<float> logits;
  std::size_t done = 0;
  for (std::size_t size : {3u, 1u, 5u, 1000u}) {
    const std::size_t n = std::min(size, p.ids.size() - done);
    const SequenceChunk chunk{std::span(p.ids).subspan(done, n), static_cast<std::int64_t>(done), blocks,
                              LogitsMode::kAll};
    StepOutput out;
    model->step({&chunk, 1}, out);
    logits.insert(logits.end(), out.logits.begin(), out.logits.begin() + static_cast<std::ptrdiff_t>(n * vocab));
    done += n;
  }
  ASSERT_EQ(done, p.ids.size());
  EXPECT_LT(max_abs_diff(logits, p.logits), kLogitsTolerance);
}

TEST_P(LlamaGolden, RaggedBatchWithScatteredBlocksEqualsSeparateRuns) {
  auto model = reference_model(golden_);
  const std::int64_t vocab = model->config().vocab_size;
  // Sequences take interleaved, descending block ids, so paging and isolation both matter.
  const std::int32_t num_seqs = static_cast<std::int32_t>(golden_.prompts.size());
  std::vector<std::vector<std::int32_t>> tables(golden_.prompts.size());
  for (std::int32_t b = 0; b < 20; ++b) {
    for (std::int32_t s = 0; s < num_seqs; ++s) tables[s].push_back(127 - (b * num_seqs + s));
  }
  std::vector<SequenceChunk> batch;
  for (std::size_t s = 0; s < golden_.prompts.size(); ++s) {
    batch.push_back({golden_.prompts[s].ids, 0, tables[s], s % 2 ? LogitsMode::kAll : LogitsMode::kLast});
  }
  StepOutput out;
  model->step(batch, out);
  std::int64_t row = 0;
  for (std::size_t s = 0; s < batch.size(); ++s) {
    const auto& p = golden_.prompts[s];
    const std::int64_t n = static_cast<std::int64_t>(p.ids.size());
    const std::int64_t first = batch[s].logits == LogitsMode::kAll ? 0 : n - 1;
    for (std::int64_t r = first; r < n; ++r, ++row) {
      EXPECT_LT(max_abs_diff(out.row(row), std::span(p.logits).subspan(static_cast<std::size_t>(r * vocab), vocab)),
                kLogitsTolerance)
          << "sequence " << s << " position " << r;
    }
  }
  EXPECT_EQ(row, out.num_rows);
}

// Rows without logits still fill every layer's KV cache, and a logit row that is not the batch's
// first keeps its own hidden state: the last layer runs its MLP on the logit rows alone.
TEST_P(LlamaGolden, RowsWithoutLogitsStillFillTheCache) {
  auto model = reference_model(golden_);
  const std::int64_t vocab = model->config().vocab_size;
  const auto& a = golden_.prompts[1];
  const auto& b = golden_.prompts[0];
  const auto blocks_a = iota_blocks(0, 32), blocks_b = iota_blocks(32, 32);
  const std::size_t split = a.ids.size() / 2;
  const SequenceChunk first[] = {{std::span(a.ids).first(split), 0, blocks_a, LogitsMode::kNone},
                                 {b.ids, 0, blocks_b, LogitsMode::kLast}};
  StepOutput out;
  model->step(first, out);
  ASSERT_EQ(out.num_rows, 1);
  const auto last_row = [&](const GoldenPrompt& p) {
    return std::span(p.logits).subspan((p.ids.size() - 1) * static_cast<std::size_t>(vocab), vocab);
  };
  EXPECT_LT(max_abs_diff(out.row(0), last_row(b)), kLogitsTolerance);

  const SequenceChunk only_cache{std::span(a.ids).subspan(split, 1), static_cast<std::int64_t>(split), blocks_a,
                                 LogitsMode::kNone};
  model->step({&only_cache, 1}, out);
  EXPECT_EQ(out.num_rows, 0);
  const SequenceChunk rest{std::span(a.ids).subspan(split + 1), static_cast<std::int64_t>(split + 1), blocks_a,
                           LogitsMode::kLast};
  model->step({&rest, 1}, out);
  ASSERT_EQ(out.num_rows, 1);
  EXPECT_LT(max_abs_diff(out.row(0), last_row(a)), kLogitsTolerance);
}

TEST_P(LlamaGolden, RejectsBadStepInput) {
  auto model = reference_model(golden_, 8);
  const auto& p = golden_.prompts[1];
  const std::vector<std::int32_t> short_table{0};
  SequenceChunk chunk{p.ids, 0, short_table, LogitsMode::kLast};
  StepOutput out;
  EXPECT_KILN_ERROR(model->step({&chunk, 1}, out), "block table has 1 blocks");
  const std::vector<std::int32_t> bad_token{static_cast<std::int32_t>(model->config().vocab_size)};
  const std::vector<std::int32_t> table{0};
  chunk = {bad_token, 0, table, LogitsMode::kLast};
  EXPECT_KILN_ERROR(model->step({&chunk, 1}, out), "outside the vocabulary");
  const std::vector<std::int32_t> bad_block{8};
  chunk = {std::span(p.ids).first(1), 0, bad_block, LogitsMode::kLast};
  EXPECT_KILN_ERROR(model->step({&chunk, 1}, out), "block id 8");
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, LlamaGolden, ::testing::ValuesIn(testing::golden_checkpoint_names()));

}  // namespace
}  // namespace kiln::models
