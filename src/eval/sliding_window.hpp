// Transformers' "perplexity of fixed-length models" windows, and a pass that runs one window
// through any models::LanguageModel chunk by chunk. Invariant: a token is scored at most once,
// from the logits of the window whose new part holds it; with stride < context every token
// after the first is scored (tinylm's METHOD), with stride == context each window's first is not.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "genai/engine.hpp"
#include "sched/scheduler.hpp"

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

// The scheduler of an engine that window passes run on: prompts cut into chunks of at most
// `max_chunk_tokens`, one sequence at a time. Throws kiln::Error unless max_chunk_tokens >= 1.
sched::SchedulerConfig window_scheduler(std::int64_t max_chunk_tokens);

// Runs one window through an engine as a scoring request (genai::RequestOptions::on_prompt_logits),
// in the engine's chunks, asking for logits only where a target is scored: the unscored prefix
// fills the KV cache and the window's last token is never run (no target follows it inside the
// window). Two passes with the same window on engines with the same scheduler yield the same row
// ranges, so two models can be walked in lockstep (compare). The engine should run nothing else.
class WindowPass {
 public:
  // Throws kiln::Error when the window is longer than the model's KV cache or its
  // max_position_embeddings.
  WindowPass(genai::Engine& engine, std::span<const std::int32_t> ids, const Window& window);
  ~WindowPass();
  WindowPass(const WindowPass&) = delete;
  WindowPass& operator=(const WindowPass&) = delete;

  // Runs the engine's next step; false once the window is done. After a true return, rows()
  // holds the logits predicting targets [first_target(), first_target() + num_rows()), possibly
  // none, valid until the engine's next step.
  bool next();

  std::int64_t first_target() const { return rows_first_target_; }
  std::int64_t num_rows() const { return static_cast<std::int64_t>(rows_.size()) / vocab_size_; }
  std::span<const float> row(std::int64_t r) const {  // [vocab]
    return rows_.subspan(static_cast<std::size_t>(r * vocab_size_), static_cast<std::size_t>(vocab_size_));
  }

 private:
  genai::Engine& engine_;
  genai::RequestId request_ = 0;
  std::int64_t vocab_size_;
  std::int64_t rows_first_target_ = 0;
  std::span<const float> rows_;  // [num_rows, vocab] of the last step
};

}  // namespace kiln::eval
