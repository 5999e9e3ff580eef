// The scoring rule of the task set (models/MODEL_CARD.md, tools/tinylm/task_scoring.py): an
// item is right when its normalised answer is a non-empty substring of the normalised
// completion. Invariant: verdicts equal Python's is_right() for every pair of UTF-8 strings.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::eval {

// ASCII letters lower-cased (nothing else: "É" stays), every run of ASCII whitespace
// (space, \t, \n, \r, \f, \v) replaced by one space, leading and trailing spaces removed.
std::string normalise_answer(std::string_view text);

bool is_right(std::string_view completion, std::string_view answer);

// One line of a tasks.jsonl file: {"id": ..., "prompt": "Q: ...\nA:", "answer": ...}.
struct TaskItem {
  std::string id;  // "item N" (1-based) when the line has none
  std::string prompt;
  std::string answer;
};

// Throws kiln::Error naming the file, the line and the field for anything malformed, and for a
// file without items.
std::vector<TaskItem> load_tasks(const std::filesystem::path& path);

}  // namespace kiln::eval
