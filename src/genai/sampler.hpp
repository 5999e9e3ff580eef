// Picks the next token from logits. Greedy (do_sample=false) takes the first maximum, as
// torch.argmax does. Sampling applies temperature, then top-k, top-p and min-p (HF's warper
// order), and draws from the renormalised distribution with a seeded RNG: std::mt19937_64
// seeded with rng_seed, uniform u = (x >> 11) · 2⁻⁵³, the token is the first whose cumulative
// probability exceeds u, walking candidates by descending logit when top-k/top-p/min-p is on
// and in vocabulary order otherwise. The same seed and logits give the same tokens everywhere.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "genai/logits_processors.hpp"
#include "kiln/generation_config.hpp"

namespace kiln::genai {

class Sampler {
 public:
  explicit Sampler(const GenerationConfig& config);

  // `logits` [vocab] is modified in place by the processors.
  std::int32_t sample(std::span<float> logits, const TokenHistory& history);

  // The distribution sample() draws from after every processor and warper (for tests and
  // logprobs): probabilities [vocab], zero outside the kept set.
  void distribution(std::span<float> logits, const TokenHistory& history, std::vector<float>& probs);

  // A token drawn from `probs` as distribution() left them (walking its candidate order).
  std::int32_t draw(std::span<const float> probs);

  double next_uniform();
  bool is_greedy() const { return !config_.do_sample; }

 private:
  GenerationConfig config_;
  std::mt19937_64 rng_;
  std::vector<std::int32_t> order_;  // scratch: candidate token ids
  std::vector<float> probs_;         // scratch: [vocab]
};

// Index of the first maximum.
std::int32_t argmax(std::span<const float> logits);

// The first token whose cumulative probability, walking the vocabulary in order, exceeds u
// (u in [0, 1); `probs` need not be normalised: u is scaled by their sum). -1 when all are 0.
std::int32_t sample_in_vocab_order(std::span<const float> probs, double u);

}  // namespace kiln::genai
