// Speculative decoding's acceptance rule. The main model scored the committed tokens' last one
// and k candidates in one step (k + 1 logit rows); this keeps the longest acceptable prefix of
// the candidates and adds one token of the main model's own, so every step yields 1..k+1 tokens.
// Greedy: a candidate is kept while it equals the main model's argmax (the output is exactly
// plain greedy decoding). Sampling: rejection sampling (Leviathan et al. 2023, Chen et al. 2023):
// candidate x drawn from the draft's q is kept with probability min(1, p(x) / q(x)); at the first
// rejection the token is drawn from norm(max(0, p - q)); after k acceptances a bonus token is
// drawn from p. Each emitted token is then distributed exactly as p, the main model's
// distribution after every logits processor and warper.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "genai/sampler.hpp"
#include "kiln/decoded_results.hpp"

namespace kiln::genai {

struct CandidateBatch {
  std::span<float> logits;  // [num_candidates + 1, vocab], processed in place
  std::int64_t vocab_size = 0;
  std::span<const std::int32_t> tokens;  // committed tokens, then the candidates
  std::int64_t num_prompt = 0;
  std::int64_t num_candidates = 0;
  // [num_candidates, vocab] the draft's distribution at each candidate; empty when the
  // candidates were proposed deterministically (prompt lookup: q is one-hot).
  std::span<const float> draft_probs;
};

struct VerifiedTokens {
  std::vector<TokenLogprob> tokens;  // accepted candidates, then the main model's token
  std::int64_t num_accepted = 0;     // candidates kept
};

VerifiedTokens verify_candidates(Sampler& sampler, const CandidateBatch& batch, std::int64_t top_logprobs);

}  // namespace kiln::genai
