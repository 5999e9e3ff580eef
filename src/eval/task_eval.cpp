#include "eval/task_eval.hpp"

#include <algorithm>
#include <iterator>

#include "eval/greedy_generation.hpp"
#include "util/clock.hpp"

namespace kiln::eval {
namespace {

std::string decode_new_text(const Tokenizer& tokenizer, std::span<const std::int32_t> generated) {
  return tokenizer.decode(generated, /*skip_special_tokens=*/true);
}

}  // namespace

std::int64_t task_context_tokens(const Tokenizer& tokenizer, std::span<const TaskItem> tasks) {
  std::int64_t longest = 0;
  for (const TaskItem& t : tasks) longest = std::max<std::int64_t>(longest, std::ssize(tokenizer.encode(t.prompt)));
  return longest + kTaskMaxNewTokens;
}

TaskReport evaluate_tasks(models::LanguageModel& model, const Tokenizer& tokenizer,
                          const std::set<std::int32_t>& eos_token_ids, std::span<const TaskItem> tasks) {
  Stopwatch clock;
  std::vector<std::vector<std::int32_t>> prompts;
  for (const TaskItem& t : tasks) prompts.push_back(tokenizer.encode(t.prompt));
  // NOTE: the whole decoded text is checked after every token (not just the last token's
  // piece) because a newline can surface only once a later byte completes a character.
  const auto stop_at_newline = [&](std::size_t, std::span<const std::int32_t> generated) {
    return decode_new_text(tokenizer, generated).find('\n') != std::string::npos;
  };
  const std::vector<Generation> generations =
      generate_greedy(model, prompts, kTaskMaxNewTokens, eos_token_ids, stop_at_newline);

  TaskReport report;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    std::string text = decode_new_text(tokenizer, generations[i].tokens);
    text.resize(std::min(text.size(), text.find('\n')));
    TaskResult r{.id = tasks[i].id,
                 .prompt = tasks[i].prompt,
                 .answer = tasks[i].answer,
                 .completion = std::move(text),
                 .num_generated = std::ssize(generations[i].tokens)};
    r.right = is_right(r.completion, r.answer);
    report.num_right += r.right ? 1 : 0;
    report.items.push_back(std::move(r));
  }
  report.accuracy = tasks.empty() ? 0.0 : static_cast<double>(report.num_right) / static_cast<double>(tasks.size());
  report.seconds = clock.elapsed_ms() / 1000.0;
  return report;
}

}  // namespace kiln::eval
