// Beam search with Hugging Face transformers' semantics (GenerationMixin._beam_search, v4.50+),
// so the same model and config give the same hypotheses. Each step: every running beam's
// log-softmax, after the logits processors, is added to its running score; the K = max(2, 1 +
// #stop tokens)·num_beams best continuations over all beams are kept (ties: lower beam, then
// lower token id); those that end (EOS, stop token or string, the length limit) and rank among
// the first num_beams become finished hypotheses scored sum / generated_length^length_penalty
// (the best num_beams are kept); the best num_beams that did not end run on. It stops as
// early_stopping says (StopCriteria), or when every continuation ended. This class only
// decides; the engine forks and frees the beams' sequences (their KV blocks are shared).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "genai/logits_processors.hpp"
#include "kiln/decoded_results.hpp"
#include "kiln/generation_config.hpp"

namespace kiln::genai {

struct BeamHypothesis {
  std::vector<std::int32_t> generated;  // ends with the token that finished it
  std::vector<TokenLogprob> logprobs;
  double score = 0;  // length-penalised
};

class BeamSearch {
 public:
  // `ends_with_stop_string(generated)`: whether the text of these tokens contains a stop string
  // (empty when the config has none).
  BeamSearch(const GenerationConfig& config, std::int64_t num_prompt, std::int64_t max_new_tokens,
             std::function<bool(std::span<const std::int32_t>)> ends_with_stop_string);

  struct Beam {
    std::span<float> logits;               // [vocab] of this step; overwritten with log-probabilities
    std::span<const std::int32_t> tokens;  // prompt + generated
    double score = 0;                      // running sum of log-probabilities
    std::span<const TokenLogprob> logprobs;
  };
  struct Continuation {
    std::size_t parent = 0;  // index into the beams passed to step()
    std::int32_t token = 0;
    double score = 0;
    TokenLogprob logprob;
  };

  // One step over the running beams (in the order the previous step returned them). Returns the
  // beams to run next, best first; empty when the search is over.
  std::vector<Continuation> step(std::span<Beam> beams);

  bool done() const { return done_; }
  // The best `count` hypotheses, best first: the finished ones, with `unfinished` beams (their
  // score a running sum, normalised here as if they ended now) when the search was cut short.
  std::vector<BeamHypothesis> results(std::int64_t count, std::vector<BeamHypothesis> unfinished = {}) const;

 private:
  bool ends(std::span<const std::int32_t> tokens, std::int32_t token, std::int64_t generated_length) const;
  double normalise(double score, std::int64_t generated_length) const;
  void add_finished(BeamHypothesis hypothesis);
  void update_early_stop(double best_running_score, std::int64_t generated_length);

  GenerationConfig config_;
  std::int64_t num_prompt_;
  std::int64_t max_new_tokens_;
  std::function<bool(std::span<const std::int32_t>)> ends_with_stop_string_;
  std::int64_t num_beams_;
  std::int64_t num_kept_;                 // K
  std::vector<BeamHypothesis> finished_;  // best first, at most num_beams
  bool improvement_possible_ = true;      // HF's is_early_stop_heuristic_unsatisfied
  bool done_ = false;
};

}  // namespace kiln::genai
