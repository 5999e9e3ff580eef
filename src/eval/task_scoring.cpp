#include "eval/task_scoring.hpp"

#include "eval/jsonl_reader.hpp"
#include "util/error.hpp"

namespace kiln::eval {
namespace {

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

std::string normalise_answer(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (const char c : text) {
    if (is_ascii_space(c)) {
      pending_space = !out.empty();  // leading whitespace is dropped
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;  // trailing whitespace never got its space
}

bool is_right(std::string_view completion, std::string_view answer) {
  const std::string want = normalise_answer(answer);
  return !want.empty() && normalise_answer(completion).find(want) != std::string::npos;
}

std::vector<TaskItem> load_tasks(const std::filesystem::path& path) {
  std::vector<TaskItem> items;
  for_each_jsonl_object(path, [&](const JsonFields& fields) {
    items.push_back({.id = fields.get_or<std::string>("id", fmt::format("item {}", items.size() + 1)),
                     .prompt = fields.get<std::string>("prompt"),
                     .answer = fields.get<std::string>("answer")});
  });
  if (items.empty()) fail("{}: no task items (expected one JSON object per line)", path.string());
  return items;
}

}  // namespace kiln::eval
