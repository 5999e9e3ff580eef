// `kiln eval repetition`: how much greedy generations loop. For each prompt the model generates
// greedily (stop at EOS or the token limit); the generation's repeated 4-gram ratio is
// 1 - distinct 4-grams / 4-grams over its token ids (EOS excluded; 0 with fewer than 4 tokens),
// and the result is the mean over prompts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "kiln/tokenizer.hpp"
#include "models/language_model.hpp"

namespace kiln::eval {

// 1 - distinct n-grams / n-grams of `tokens`; 0 when there is no n-gram.
double repeated_ngram_ratio(std::span<const std::int32_t> tokens, std::size_t n);

struct RepetitionItem {
  std::string prompt;
  std::string completion;       // decoded, special tokens skipped
  std::int64_t num_tokens = 0;  // generated, EOS excluded
  double ratio = 0.0;           // repeated 4-gram ratio
};

struct RepetitionReport {
  std::vector<RepetitionItem> items;
  double mean_ratio = 0.0;
  double seconds = 0.0;
};

// A .jsonl file holds one {"prompt": ...} object per line; any other file one prompt per
// non-empty line. Throws kiln::Error naming the file (and line) when malformed or empty.
std::vector<std::string> load_prompts(const std::filesystem::path& path);

RepetitionReport evaluate_repetition(models::LanguageModel& model, const Tokenizer& tokenizer,
                                     const std::set<std::int32_t>& eos_token_ids, std::span<const std::string> prompts,
                                     std::int64_t max_new_tokens);

}  // namespace kiln::eval
