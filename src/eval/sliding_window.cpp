#include "eval/sliding_window.hpp"

#include <algorithm>

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

sched::SchedulerConfig window_scheduler(std::int64_t max_chunk_tokens) {
  if (max_chunk_tokens < 1) fail("window pass: chunk size must be positive, got {}", max_chunk_tokens);
  return {.max_num_batched_tokens = max_chunk_tokens, .max_num_seqs = 1};
}

WindowPass::WindowPass(genai::Engine& engine, std::span<const std::int32_t> ids, const Window& window)
    : engine_(engine), vocab_size_(engine.model().config().vocab_size) {
  const models::LanguageModel& model = engine.model();
  const models::KvCacheLayout& kv = model.kv_cache_layout();
  const std::int64_t length = window.end - window.begin;
  if (length > kv.num_tokens()) {
    fail("a window of {} tokens does not fit the KV cache of {} tokens (lower --context)", length, kv.num_tokens());
  }
  if (length > model.config().max_position_embeddings) {
    fail("a window of {} tokens exceeds the model's max_position_embeddings {} (lower --context)", length,
         model.config().max_position_embeddings);
  }
  // The window's last token is never run; the row at window position p predicts the token at p + 1.
  const auto window_ids = ids.subspan(static_cast<std::size_t>(window.begin), static_cast<std::size_t>(length - 1));
  genai::RequestOptions options;
  options.prompt_logits_from = window.first_target - 1 - window.begin;
  options.on_prompt_logits = [this, begin = window.begin](std::int64_t first_position, std::span<const float> rows) {
    rows_first_target_ = begin + first_position + 1;
    rows_ = rows;
  };
  request_ = engine_.add_request({window_ids.begin(), window_ids.end()}, GenerationConfig{}, std::move(options));
}

WindowPass::~WindowPass() { engine_.release(request_); }

bool WindowPass::next() {
  if (engine_.request(request_).finish_reason != GenerationFinishReason::NONE) return false;
  rows_ = {};
  engine_.step();
  return true;
}

}  // namespace kiln::eval
