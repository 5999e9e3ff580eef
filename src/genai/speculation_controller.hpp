// Chooses, before each step of a speculative request, how many candidates to propose (0: a
// plain step), so that speculative decoding is never much slower than plain decoding. It keeps
// running estimates of the costs it observes — a plain step t0, each extra verified row t_row,
// each draft token t_draft — and of α, the chance that a candidate is accepted, and picks
// k = argmin over 0..max of expected time per token:
//   k = 0: t0;  k > 0: (k·t_draft + t0 + k·t_row) / E[tokens | k],  E = (1 − α^(k+1)) / (1 − α).
// While plain decoding wins it probes again with a short speculative step after 8, 16, 32, ...
// plain steps (the acceptance rate changes with the text), and never when the costs alone
// (α = 1) already rule speculation out; while speculation wins, a plain step every 32 keeps t0
// current. Without adaptation it always proposes `max`.
#pragma once

#include <cstdint>

namespace kiln::genai {

class SpeculationController {
 public:
  SpeculationController(std::int64_t max_candidates, bool adaptive);

  // Candidates to propose this step (0: a plain step).
  std::int64_t next_num_candidates();

  // A plain decode step took `step_ms`.
  void record_plain_step(double step_ms);
  // A speculative step: `proposed` candidates cost `draft_ms` to make (0 for prompt lookup),
  // verifying them took `verify_ms`, `accepted` were kept.
  void record_speculative_step(std::int64_t proposed, std::int64_t accepted, double draft_ms, double verify_ms);

  // Expected ms per generated token with k candidates under the current estimates.
  double expected_ms_per_token(std::int64_t k) const;
  double acceptance_rate() const;
  bool speculating() const { return last_choice_ > 0; }

 private:
  std::int64_t best_k(double alpha) const;

  std::int64_t max_candidates_;
  bool adaptive_;
  // Running estimates (exponential moving averages; negative: not observed yet).
  double plain_ms_ = -1;     // t0
  double row_ms_ = -1;       // t_row
  double draft_ms_ = -1;     // t_draft per candidate
  double accepted_ = 0;      // decayed counts for α: accepted candidates ...
  double rejected_ = 0;      // ... and rejections (a step that kept k of k has none)
  std::int64_t plain_steps_ = 0;       // plain steps since the last speculative one
  std::int64_t speculative_steps_ = 0;  // speculative steps since the last plain one
  std::int64_t probe_interval_ = 8;    // plain steps before the next probe
  std::int64_t last_choice_ = 0;
};

}  // namespace kiln::genai
