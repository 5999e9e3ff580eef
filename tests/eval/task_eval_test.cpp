// Oracles: tools/tinylm/task_scoring.py (the rule models/MODEL_CARD.md states): its is_right()
// verdicts on hand-written pairs, and transformers' greedy completions and verdicts for a small
// task set on llama3_tiny (tests/data/eval/goldens.json) must be reproduced exactly.
#include <gtest/gtest.h>

#include "eval/task_eval.hpp"
#include "eval_fixtures.hpp"

namespace kiln::eval {
namespace {

TEST(TaskScoring, NormalisesAsciiCaseAndWhitespaceOnly) {
  EXPECT_EQ(normalise_answer("  MMAP,\t munmap \n"), "mmap, munmap");
  EXPECT_EQ(normalise_answer("\v\f\r"), "");
  EXPECT_EQ(normalise_answer("ÉCOLE Été"), "École Été");  // non-ASCII letters keep their case
  EXPECT_EQ(normalise_answer("a\u00a0b"), "a\u00a0b");    // U+00A0 is not ASCII whitespace
}

TEST(TaskScoring, VerdictsEqualPythonsIsRight) {
  for (const Json& c : testing::eval_goldens()["scoring_cases"]) {
    const auto completion = c["completion"].get<std::string>();
    const auto answer = c["answer"].get<std::string>();
    EXPECT_EQ(is_right(completion, answer), c["right"].get<bool>()) << completion << " | " << answer;
  }
}

TEST(TaskScoring, LoadsTaskFilesAndNamesBadLines) {
  testing::TempDir tmp;
  const auto path = tmp.path() / "tasks.jsonl";
  write_file_atomic(
      path,
      "{\"id\": \"a\", \"prompt\": \"Q: x\\nA:\", \"answer\": \"y\"}\n\n{\"prompt\": \"p\", \"answer\": \"q\"}\n");
  const std::vector<TaskItem> items = load_tasks(path);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].id, "a");
  EXPECT_EQ(items[0].prompt, "Q: x\nA:");
  EXPECT_EQ(items[1].id, "item 2");
  write_file_atomic(path, "{\"prompt\": \"p\", \"answer\": \"q\"}\n{\"prompt\": \"p\"}\n");
  EXPECT_KILN_ERROR(load_tasks(path), "tasks.jsonl: line 2", "answer");
  write_file_atomic(path, "{\"prompt\": 3, \"answer\": \"q\"}\n");
  EXPECT_KILN_ERROR(load_tasks(path), "line 1", "prompt");
  write_file_atomic(path, "not json\n");
  EXPECT_KILN_ERROR(load_tasks(path), "line 1", "invalid JSON");
  write_file_atomic(path, "\n");
  EXPECT_KILN_ERROR(load_tasks(path), "no task items");
  EXPECT_KILN_ERROR(load_tasks(tmp.path() / "missing.jsonl"), "missing.jsonl");
}

TEST(TaskEval, ReproducesTransformersCompletionsAndVerdicts) {
  const Json& g = testing::eval_goldens()["tasks"];
  const auto dir = testing::checkpoint_dir(g["checkpoint"].get<std::string>());
  const std::vector<TaskItem> tasks = load_tasks(testing::test_data_dir() / "eval" / g["file"].get<std::string>());
  genai::LoadedModel m = genai::load_model(dir, {.context_tokens = task_context_tokens(Tokenizer::from_dir(dir), tasks),
                                                 .max_sequences = 3,       // fewer than the items: the engine queues
                                                 .device = "REFERENCE"});  // transformers' oracle: the exact path
  const TaskReport report = evaluate_tasks(*m.model, m.tokenizer, m.generation_defaults.eos_token_ids, tasks);
  ASSERT_EQ(report.items.size(), g["items"].size());
  std::int64_t right = 0;
  for (std::size_t i = 0; i < report.items.size(); ++i) {
    const Json& want = g["items"][i];
    EXPECT_EQ(report.items[i].id, want["id"].get<std::string>());
    EXPECT_EQ(report.items[i].completion, want["completion"].get<std::string>()) << report.items[i].id;
    EXPECT_EQ(report.items[i].right, want["right"].get<bool>()) << report.items[i].id;
    EXPECT_LE(report.items[i].num_generated, kTaskMaxNewTokens);
    right += want["right"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(report.num_right, right);
  EXPECT_GT(right, 0);                                        // the set has right items ...
  EXPECT_LT(right, static_cast<std::int64_t>(tasks.size()));  // ... and wrong ones
  EXPECT_DOUBLE_EQ(report.accuracy, static_cast<double>(right) / static_cast<double>(tasks.size()));
}

}  // namespace
}  // namespace kiln::eval
