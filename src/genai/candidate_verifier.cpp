#include "genai/candidate_verifier.hpp"

#include <algorithm>

#include "genai/logprobs.hpp"

namespace kiln::genai {
namespace {

// Rejection at a sampled step: the replacement token from norm(max(0, p - q)), or from p when
// p ≤ q everywhere (only possible through rounding, since both sum to 1).
std::int32_t draw_residual(Sampler& sampler, std::span<const float> p, std::span<const float> q, std::int32_t rejected,
                           std::vector<float>& residual) {
  residual.assign(p.begin(), p.end());
  if (q.empty()) {
    residual[static_cast<std::size_t>(rejected)] = 0.0f;  // one-hot q
  } else {
    for (std::size_t i = 0; i < residual.size(); ++i) residual[i] = std::max(0.0f, p[i] - q[i]);
  }
  const double u = sampler.next_uniform();
  std::int32_t token = sample_in_vocab_order(residual, u);
  return token >= 0 ? token : sample_in_vocab_order(p, u);
}

}  // namespace

VerifiedTokens verify_candidates(Sampler& sampler, const CandidateBatch& batch, std::int64_t top_logprobs) {
  VerifiedTokens out;
  const auto vocab = static_cast<std::size_t>(batch.vocab_size);
  const std::size_t committed = batch.tokens.size() - static_cast<std::size_t>(batch.num_candidates);
  std::vector<float> p, residual;
  for (std::int64_t i = 0; i <= batch.num_candidates; ++i) {
    std::span<float> row = batch.logits.subspan(static_cast<std::size_t>(i) * vocab, vocab);
    // The main model's view at this position: committed tokens and the candidates before it.
    const TokenHistory history{batch.tokens.first(committed + static_cast<std::size_t>(i)), batch.num_prompt};
    const bool last = i == batch.num_candidates;
    std::int32_t token = 0;
    bool accepted = false;
    if (sampler.is_greedy() || last) {
      token = sampler.sample(row, history);
      accepted = !last && token == batch.tokens[committed + static_cast<std::size_t>(i)];
    } else {
      sampler.distribution(row, history, p);
      const std::int32_t candidate = batch.tokens[committed + static_cast<std::size_t>(i)];
      const std::span<const float> q = batch.draft_probs.empty()
                                           ? std::span<const float>()
                                           : batch.draft_probs.subspan(static_cast<std::size_t>(i) * vocab, vocab);
      const double q_x = q.empty() ? 1.0 : q[static_cast<std::size_t>(candidate)];
      const double p_x = p[static_cast<std::size_t>(candidate)];
      // Accept with probability min(1, p/q): u < p/q, written without dividing by q.
      accepted = q_x > 0.0 && sampler.next_uniform() * q_x < p_x;
      token = accepted ? candidate : draw_residual(sampler, p, q, candidate, residual);
    }
    out.tokens.push_back(token_logprob(row, token, top_logprobs));
    if (!accepted) break;
    ++out.num_accepted;
  }
  return out;
}

}  // namespace kiln::genai
