// `kiln eval task`: greedy answers to a task set, scored by task_scoring's rule. The decoding
// is the one models/MODEL_CARD.md specifies: the prompt with the tokenizer's special tokens, no
// chat template, argmax, at most 64 new tokens, stop at EOS or once the decoded new text holds a
// newline; the completion is that text (special tokens skipped) up to the first newline.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "eval/task_scoring.hpp"
#include "kiln/tokenizer.hpp"
#include "models/language_model.hpp"

namespace kiln::eval {

inline constexpr std::int64_t kTaskMaxNewTokens = 64;

struct TaskResult {
  std::string id;
  std::string prompt;
  std::string answer;
  std::string completion;
  std::int64_t num_generated = 0;  // tokens
  bool right = false;
};

struct TaskReport {
  std::vector<TaskResult> items;  // in the file's order
  std::int64_t num_right = 0;
  double accuracy = 0.0;  // num_right / items
  double seconds = 0.0;
};

// The longest prompt plus kTaskMaxNewTokens: the context the model must be loaded with.
std::int64_t task_context_tokens(const Tokenizer& tokenizer, std::span<const TaskItem> tasks);

TaskReport evaluate_tasks(models::LanguageModel& model, const Tokenizer& tokenizer,
                          const std::set<std::int32_t>& eos_token_ids, std::span<const TaskItem> tasks);

}  // namespace kiln::eval
