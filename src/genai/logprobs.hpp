// Log-probabilities of generated tokens: log-softmax over logits after the logits processors
// (penalties, no-repeat n-grams, min length), before temperature and truncation, so a score
// means the same for greedy decoding, sampling and beam search.
#pragma once

#include <cstdint>
#include <span>

#include "kiln/decoded_results.hpp"

namespace kiln::genai {

// The token's log-probability and, when top_n > 0, the top_n most likely tokens (best first,
// ties to the lower id).
TokenLogprob token_logprob(std::span<const float> logits, std::int32_t token, std::int64_t top_n);

}  // namespace kiln::genai
