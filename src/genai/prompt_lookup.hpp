// Prompt-lookup decoding's candidate source (HF PromptLookupCandidateGenerator): the last n
// tokens, n = max_ngram_size down to 1, are looked up in the earlier tokens (prompt and
// generated); at the first (earliest) earlier occurrence, the tokens that followed it are the
// candidates. Deterministic, so the verifier treats its proposal distribution as one-hot.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kiln::genai {

// Up to max_candidates tokens (none when no n-gram recurs).
std::vector<std::int32_t> lookup_candidates(std::span<const std::int32_t> tokens, std::int64_t max_ngram_size,
                                            std::int64_t max_candidates);

}  // namespace kiln::genai
