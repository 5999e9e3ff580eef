// Transformers' "perplexity of fixed-length models" windows, and a pass that runs one window
// through any models::LanguageModel chunk by chunk. Invariant: a token is scored at most once,
// from the logits of the window whose new part holds it; with stride < context every token
// after the first is scored (tinylm's METHOD), with stride == context each window's first is not.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "models/language_model.hpp"

namespace kiln::eval {

// One window: tokens [begin, end) run as a fresh sequence (positions from 0, empty cache);
// it scores targets [first_target, end), each from the logits at the position before it.
struct Window {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t first_target = 0;

  std::int64_t num_scored() const { return end - first_target; }
};

// Windows start at 0, stride, 2·stride, ...; each holds min(context, num_tokens - begin) tokens
// and scores targets from max(previous end, begin + 1); the last one ends at num_tokens. Throws
// kiln::Error unless num_tokens >= 2, context >= 2 and 1 <= stride <= context.
std::vector<Window> plan_windows(std::int64_t num_tokens, std::int64_t context, std::int64_t stride);

// Runs one window through the model in chunks of at most `max_chunk_tokens`, asking for logits
// only where a target is scored: the unscored prefix fills the KV cache (LogitsMode::kNone) and
// the window's last token is never run (no target follows it inside the window). Two passes
// with the same window and chunk size yield the same row ranges, so two models can be walked
// in lockstep (compare). The pass uses KV blocks 0, 1, ... of the model's cache.
class WindowPass {
 public:
  // Throws kiln::Error when the window is longer than the model's KV cache or its
  // max_position_embeddings.
  WindowPass(models::LanguageModel& model, std::span<const std::int32_t> ids, const Window& window,
             std::int64_t max_chunk_tokens);

  // Runs the next chunk; false once the window is done. After a true return, rows() holds the
  // logits predicting targets [first_target(), first_target() + num_rows()), possibly none.
  bool next();

  std::int64_t first_target() const { return rows_first_target_; }
  std::int64_t num_rows() const { return out_.num_rows; }
  std::span<const float> row(std::int64_t r) const { return out_.row(r); }  // [vocab]

 private:
  models::LanguageModel& model_;
  std::span<const std::int32_t> window_ids_;  // [end - begin]
  std::int64_t num_unscored_;                 // positions before the first logits row
  std::int64_t num_to_run_;                   // end - begin - 1
  std::int64_t max_chunk_tokens_;
  std::int64_t num_done_ = 0;
  std::int64_t window_begin_;
  std::int64_t rows_first_target_ = 0;
  std::vector<std::int32_t> block_table_;
  models::StepOutput out_;
};

}  // namespace kiln::eval
