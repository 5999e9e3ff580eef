// Chooses, before each step of a speculative request, how many candidates to propose (0: a
// plain step) and how many committed tokens the draft model should catch up on, so that
// speculative decoding is never much slower than plain decoding. It keeps running estimates of
// the costs it observes — a plain step t0, each extra verified row t_row, each draft token
// t_draft, each token of draft catch-up — and of α, the chance that a candidate is accepted,
// and picks k = argmin over 0..max of expected time per token:
//   k = 0: t0;  k > 0: (k·t_draft + t0 + k·t_row) / E[tokens | k],  E = (1 − α^(k+1)) / (1 − α).
// Invariant (the floor): a ledger of the time spent beyond what plain decoding would have taken
// (draft catch-up, speculative steps, minus what accepted candidates saved) may exceed
// kFloorSlack × the plain-decoding time only by the one step that crossed it. Exploration — the
// draft's catch-up on tokens it has not seen (the whole prompt or chat history at first, done
// in chunks between plain steps) and probes with a short speculative step after 8, 16, 32, ...
// plain steps — is paid from that allowance, and stops for good once even perfect acceptance
// could not beat plain decoding under the measured costs (or, before they are measured, the
// optimistic priors: the draft's cost as its size relative to the main model's, a verified row
// as a prefill token). While speculation wins, a plain step every 32 keeps t0 current.
// Without adaptation it always proposes `max` and never plans catch-up.
#pragma once

#include <cstdint>

namespace kiln::genai {

class SpeculationController {
 public:
  // `draft_cost_ratio`: the draft's cost per token over the main model's (e.g. the ratio of
  // their multiply-adds per token), the prior before the draft is measured; 0 when candidates
  // cost nothing to make (prompt lookup).
  SpeculationController(std::int64_t max_candidates, bool adaptive, double draft_cost_ratio = 0);

  struct Plan {
    std::int64_t candidates = 0;  // candidates to propose (0: a plain step)
    std::int64_t catch_up = 0;    // committed tokens the draft should compute beside a plain step
  };
  // `draft_behind`: committed tokens the draft has not computed yet (0 for prompt lookup).
  Plan plan_step(std::int64_t draft_behind);

  // The main model computed `tokens` prompt tokens in `ms` (the step that produced the first token).
  void record_prefill(std::int64_t tokens, double ms);
  // A plain decode step took `step_ms`.
  void record_plain_step(double step_ms);
  // The draft computed `tokens` committed tokens in `ms` beside a plain step.
  void record_catch_up(std::int64_t tokens, double ms);
  // A speculative step: `proposed` candidates cost `draft_ms` to make (0 for prompt lookup),
  // verifying them took `verify_ms`, `accepted` were kept.
  void record_speculative_step(std::int64_t proposed, std::int64_t accepted, double draft_ms, double verify_ms);

  // Expected ms per generated token with k candidates under the current estimates.
  double expected_ms_per_token(std::int64_t k) const;
  double acceptance_rate() const;
  // The ledger: ms spent beyond plain decoding (negative: speculation saved time), and the
  // plain-decoding time of the tokens generated so far (the floor's reference).
  double overhead_ms() const { return overhead_ms_; }
  double plain_equivalent_ms() const { return plain_equivalent_ms_; }

 private:
  std::int64_t best_k(double alpha) const;
  // Costs not measured yet are replaced by optimistic priors (see the .cpp).
  double draft_estimate_ms() const;
  double row_estimate_ms() const;
  double allowance_ms() const;  // what exploration may still spend under the floor

  std::int64_t max_candidates_;
  bool adaptive_;
  double draft_cost_ratio_;
  // Running estimates (negative: not observed yet).
  double plain_ms_ = -1;        // t0
  double row_ms_ = -1;          // t_row
  double draft_ms_ = -1;        // t_draft per candidate
  double catch_up_ms_ = -1;     // per token of draft catch-up
  double prefill_row_ms_ = -1;  // per prompt token of the main model's prefill
  double accepted_ = 0;         // decayed counts for α: accepted candidates ...
  double rejected_ = 0;         // ... and rejections (a step that kept k of k has none)
  double overhead_ms_ = 0;
  double plain_equivalent_ms_ = 0;
  std::int64_t plain_steps_ = 0;        // plain steps since the last speculative one
  std::int64_t speculative_steps_ = 0;  // speculative steps since the last plain one
  std::int64_t probe_interval_ = 0;     // plain steps before the next probe (the first: at once)
};

}  // namespace kiln::genai
