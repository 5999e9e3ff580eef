// Running a compiled model against another runtime's goldens (llama.cpp on a GGUF, OpenVINO on
// an IR): the prompt's logits, then the oracle's greedy tokens for as long as its choice is
// clear. A step whose top-2 margin is within the two runtimes' numeric noise may legitimately go
// either way, and so may everything after it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "models/language_model.hpp"
#include "models/step.hpp"

namespace kiln::models::golden {

inline float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  float m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

inline float max_abs_diff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  float m = 0;
  for (std::size_t r = 0; r < a.size(); ++r) m = std::max(m, max_abs_diff(a[r], b[r]));
  return m;
}

inline std::int32_t argmax(std::span<const float> row) {
  return static_cast<std::int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

struct Traced {
  std::vector<std::vector<float>> prompt_logits;  // [prompt position][vocab]
  std::size_t steps_compared = 0;
};

// Runs the prompt (one sequence in blocks 0..3), then follows `greedy` while `margins` exceed
// `noise`, expecting the model's argmax to be the oracle's token at each step it follows.
inline Traced run_and_follow(LanguageModel& model, std::span<const std::int32_t> prompt_ids,
                             std::span<const std::int32_t> greedy, std::span<const float> margins, float noise) {
  const std::vector<std::int32_t> blocks = {0, 1, 2, 3};
  const SequenceChunk prompt{prompt_ids, 0, blocks, LogitsMode::kAll};
  StepOutput out;
  model.step({&prompt, 1}, out);
  Traced run;
  for (std::int64_t r = 0; r < out.num_rows; ++r) run.prompt_logits.emplace_back(out.row(r).begin(), out.row(r).end());
  std::vector<std::int32_t> tokens(prompt_ids.begin(), prompt_ids.end());
  std::int32_t next = argmax(out.row(out.num_rows - 1));
  for (std::size_t i = 0; i < greedy.size() && margins[i] > noise; ++i) {
    EXPECT_EQ(next, greedy[i]) << "greedy step " << i;
    if (next != greedy[i]) break;
    ++run.steps_compared;
    tokens.push_back(next);
    const SequenceChunk step{std::span(tokens).last(1), static_cast<std::int64_t>(tokens.size()) - 1, blocks,
                             LogitsMode::kLast};
    model.step({&step, 1}, out);
    next = argmax(out.row(0));
  }
  return run;
}

}  // namespace kiln::models::golden
