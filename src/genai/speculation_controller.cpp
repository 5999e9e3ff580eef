#include "genai/speculation_controller.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::genai {
namespace {

// Timing noise only ever adds time (preemption, a cold first step: 17 ms against 0.5 ms seen on
// a 6M-parameter model), so a faster observation replaces the estimate at once, and a slower
// one moves it by this weight (the costs do grow with the context).
constexpr double kSmoothing = 0.2;
constexpr double kCountDecay = 0.9;            // α forgets old steps at this rate per step
constexpr std::int64_t kWarmupPlainSteps = 2;  // measure t0 before the first speculative step
constexpr std::int64_t kProbeCandidates = 2;   // a probe is short: cheap when it fails
constexpr std::int64_t kMaxProbeInterval = 256;
// While speculating, every this many speculative steps one plain step re-measures t0: the
// per-row cost is derived from it, so a t0 measured high once (a slow first decode step) would
// otherwise make verification look free for the rest of the generation.
constexpr std::int64_t kPlainRefreshInterval = 32;
// A step the OS preempted can take 10x its usual time; an observation counts as at most this
// many times the estimate, so one stall cannot make speculation look cheap (or dear) for long.
// Real drift (a growing context) still passes: the estimate may double per observation.
constexpr double kMaxJump = 2.0;

// A measured duration (one-sided noise: see kSmoothing).
void smooth_duration(double& estimate, double observation) {
  if (estimate < 0 || observation <= estimate) {
    estimate = observation;
    return;
  }
  observation = std::min(observation, kMaxJump * estimate);
  estimate = (1 - kSmoothing) * estimate + kSmoothing * observation;
}

// A derived cost (a difference of durations, noisy both ways, possibly 0).
void smooth_difference(double& estimate, double observation) {
  estimate = estimate < 0 ? observation : (1 - kSmoothing) * estimate + kSmoothing * observation;
}

}  // namespace

SpeculationController::SpeculationController(std::int64_t max_candidates, bool adaptive)
    : max_candidates_(std::max<std::int64_t>(max_candidates, 0)), adaptive_(adaptive) {}

double SpeculationController::acceptance_rate() const {
  const double seen = accepted_ + rejected_;
  return seen > 0 ? accepted_ / seen : 0.0;
}

double SpeculationController::expected_ms_per_token(std::int64_t k) const {
  if (k == 0) return plain_ms_;
  const double alpha = std::min(acceptance_rate(), 0.999);
  const double tokens = (1 - std::pow(alpha, double(k + 1))) / (1 - alpha);
  return (double(k) * std::max(draft_ms_, 0.0) + plain_ms_ + double(k) * std::max(row_ms_, 0.0)) / tokens;
}

std::int64_t SpeculationController::best_k(double alpha) const {
  const double a = std::min(alpha, 0.999);
  std::int64_t best = 0;
  double best_ms = plain_ms_;
  for (std::int64_t k = 1; k <= max_candidates_; ++k) {
    const double tokens = (1 - std::pow(a, double(k + 1))) / (1 - a);
    const double ms = (double(k) * draft_ms_ + plain_ms_ + double(k) * row_ms_) / tokens;
    if (ms < best_ms) {
      best_ms = ms;
      best = k;
    }
  }
  return best;
}

std::int64_t SpeculationController::next_num_candidates() {
  if (!adaptive_ || max_candidates_ == 0) return last_choice_ = max_candidates_;
  if (plain_ms_ < 0 || (plain_steps_ < kWarmupPlainSteps && row_ms_ < 0)) return last_choice_ = 0;
  if (row_ms_ < 0 || draft_ms_ < 0) return last_choice_ = max_candidates_;  // first speculative step
  const std::int64_t k = best_k(acceptance_rate());
  if (k > 0) return last_choice_ = speculative_steps_ >= kPlainRefreshInterval ? 0 : k;
  // Plain decoding wins now. Probe again later, unless even perfect acceptance could not win.
  if (best_k(1.0) == 0 || plain_steps_ < probe_interval_) return last_choice_ = 0;
  probe_interval_ = std::min(probe_interval_ * 2, kMaxProbeInterval);
  return last_choice_ = std::min(kProbeCandidates, max_candidates_);
}

void SpeculationController::record_plain_step(double step_ms) {
  smooth_duration(plain_ms_, step_ms);
  ++plain_steps_;
  speculative_steps_ = 0;
}

void SpeculationController::record_speculative_step(std::int64_t proposed, std::int64_t accepted, double draft_ms,
                                                    double verify_ms) {
  if (proposed <= 0) return;
  smooth_duration(draft_ms_, draft_ms / double(proposed));
  if (plain_ms_ >= 0) smooth_difference(row_ms_, std::max(0.0, verify_ms - plain_ms_) / double(proposed));
  accepted_ = kCountDecay * accepted_ + double(accepted);
  rejected_ = kCountDecay * rejected_ + (accepted < proposed ? 1.0 : 0.0);
  if (best_k(acceptance_rate()) > 0) probe_interval_ = 8;  // speculation pays again
  plain_steps_ = 0;
  ++speculative_steps_;
}

}  // namespace kiln::genai
