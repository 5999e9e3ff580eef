#include "eval/sliding_window.hpp"

#include <algorithm>
#include <numeric>

#include "util/error.hpp"

namespace kiln::eval {

std::vector<Window> plan_windows(std::int64_t num_tokens, std::int64_t context, std::int64_t stride) {
  if (context < 2 || stride < 1 || stride > context) {
    fail("sliding window: need context >= 2 and 1 <= stride <= context, got context {} and stride {}", context, stride);
  }
  if (num_tokens < 2) fail("sliding window: the text must encode to at least 2 tokens, got {}", num_tokens);
  std::vector<Window> plan;
  std::int64_t prev_end = 0;
  for (std::int64_t begin = 0;; begin += stride) {
    const std::int64_t end = std::min(begin + context, num_tokens);
    // A window's first token has no context inside it: with stride == context (disjoint
    // windows) it goes unscored, as in transformers' loop, whose labels shift by one.
    plan.push_back({begin, end, std::max(prev_end, begin + 1)});
    prev_end = end;
    if (end == num_tokens) return plan;
  }
}

WindowPass::WindowPass(models::LanguageModel& model, std::span<const std::int32_t> ids, const Window& window,
                       std::int64_t max_chunk_tokens)
    : model_(model),
      window_ids_(
          ids.subspan(static_cast<std::size_t>(window.begin), static_cast<std::size_t>(window.end - window.begin))),
      num_unscored_(window.first_target - 1 - window.begin),
      num_to_run_(window.end - window.begin - 1),
      max_chunk_tokens_(max_chunk_tokens),
      window_begin_(window.begin) {
  const models::KvCacheLayout& kv = model.kv_cache_layout();
  const std::int64_t length = window.end - window.begin;
  if (length > kv.num_tokens()) {
    fail("a window of {} tokens does not fit the KV cache of {} tokens (lower --context)", length, kv.num_tokens());
  }
  if (length > model.config().max_position_embeddings) {
    fail("a window of {} tokens exceeds the model's max_position_embeddings {} (lower --context)", length,
         model.config().max_position_embeddings);
  }
  if (max_chunk_tokens < 1) fail("window pass: chunk size must be positive, got {}", max_chunk_tokens);
  block_table_.resize(static_cast<std::size_t>((length + kv.block_size - 1) / kv.block_size));
  std::iota(block_table_.begin(), block_table_.end(), 0);
}

bool WindowPass::next() {
  if (num_done_ >= num_to_run_) return false;
  // Chunks never straddle the first scored position, so a chunk is all kNone or all kAll.
  const std::int64_t limit = num_done_ < num_unscored_ ? num_unscored_ : num_to_run_;
  const std::int64_t n = std::min(max_chunk_tokens_, limit - num_done_);
  const bool scored = num_done_ >= num_unscored_;
  const models::SequenceChunk chunk{
      .tokens = window_ids_.subspan(static_cast<std::size_t>(num_done_), static_cast<std::size_t>(n)),
      .num_cached = num_done_,
      .block_table = block_table_,
      .logits = scored ? models::LogitsMode::kAll : models::LogitsMode::kNone};
  model_.step(std::span(&chunk, 1), out_);
  if (!scored) out_.num_rows = 0;
  // The row at window position p predicts the token at p + 1.
  rows_first_target_ = window_begin_ + num_done_ + 1;
  num_done_ += n;
  return true;
}

}  // namespace kiln::eval
