// Greedy continuations of many prompts, run as one continuous batch through genai::Engine (the
// path every generation takes). Batching does not change greedy tokens: the engine's tests hold
// its output invariant under batching, chunking and preemption.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <vector>

#include "models/language_model.hpp"

namespace kiln::eval {

struct Generation {
  std::vector<std::int32_t> tokens;  // generated ids, the stopping EOS id included when it came
  bool ended_with_eos = false;
};

// Asked after every generated token that is not EOS: true stops that prompt's generation (the
// token stays in the output). `generated` holds the prompt's tokens so far, this one included.
using StopRule = std::function<bool(std::size_t prompt_index, std::span<const std::int32_t> generated)>;

// Argmax decoding (ties to the lowest id), no logits processors, at most `max_new_tokens` per
// prompt, stopping at any of `eos_token_ids` or when `stop` says so. Throws kiln::Error when a
// prompt is empty or does not fit the model's context.
std::vector<Generation> generate_greedy(models::LanguageModel& model,
                                        std::span<const std::vector<std::int32_t>> prompts, std::int64_t max_new_tokens,
                                        const std::set<std::int32_t>& eos_token_ids, const StopRule& stop = {});

}  // namespace kiln::eval
