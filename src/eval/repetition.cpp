#include "eval/repetition.hpp"

#include <algorithm>
#include <iterator>
#include <sstream>

#include "eval/greedy_generation.hpp"
#include "eval/jsonl_reader.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace kiln::eval {

double repeated_ngram_ratio(std::span<const std::int32_t> tokens, std::size_t n) {
  if (n == 0 || tokens.size() < n) return 0.0;
  std::vector<std::vector<std::int32_t>> grams;  // [count, n]
  for (std::size_t i = 0; i + n <= tokens.size(); ++i) grams.emplace_back(tokens.begin() + i, tokens.begin() + i + n);
  const auto total = static_cast<double>(grams.size());
  std::sort(grams.begin(), grams.end());
  const auto distinct = static_cast<double>(std::unique(grams.begin(), grams.end()) - grams.begin());
  return 1.0 - distinct / total;
}

std::vector<std::string> load_prompts(const std::filesystem::path& path) {
  std::vector<std::string> prompts;
  if (path.extension() == ".jsonl") {
    for_each_jsonl_object(path,
                          [&](const JsonFields& fields) { prompts.push_back(fields.get<std::string>("prompt")); });
  } else {
    std::istringstream lines(read_file(path));
    for (std::string line; std::getline(lines, line);) {
      if (line.find_first_not_of(" \t\r") != std::string::npos) prompts.push_back(line);
    }
  }
  if (prompts.empty()) fail("{}: no prompts", path.string());
  return prompts;
}

RepetitionReport evaluate_repetition(models::LanguageModel& model, const Tokenizer& tokenizer,
                                     const std::set<std::int32_t>& eos_token_ids, std::span<const std::string> prompts,
                                     std::int64_t max_new_tokens) {
  Stopwatch clock;
  std::vector<std::vector<std::int32_t>> ids;
  for (const std::string& p : prompts) ids.push_back(tokenizer.encode(p));
  std::vector<Generation> generations = generate_greedy(model, ids, max_new_tokens, eos_token_ids);
  RepetitionReport report;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    std::vector<std::int32_t>& tokens = generations[i].tokens;
    if (generations[i].ended_with_eos) tokens.pop_back();
    report.items.push_back({.prompt = prompts[i],
                            .completion = tokenizer.decode(tokens, /*skip_special_tokens=*/true),
                            .num_tokens = std::ssize(tokens),
                            .ratio = repeated_ngram_ratio(tokens, 4)});
    report.mean_ratio += report.items.back().ratio / static_cast<double>(prompts.size());
  }
  report.seconds = clock.elapsed_ms() / 1000.0;
  return report;
}

}  // namespace kiln::eval
