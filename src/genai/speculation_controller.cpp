#include "genai/speculation_controller.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::genai {
namespace {

// Exploration may cost at most this fraction of plain decoding's time: the 0.95x floor
// (1/0.95 = 1.053) with room for the one step that crosses the line and for timing noise.
constexpr double kFloorSlack = 0.03;
// Timing noise only ever adds time (preemption, a cold first step: 17 ms against 0.5 ms seen on
// a 6M-parameter model), so a faster observation replaces the estimate at once, and a slower
// one moves it by this weight (the costs do grow with the context).
constexpr double kSmoothing = 0.2;
constexpr double kCountDecay = 0.9;            // α forgets old steps at this rate per step
constexpr std::int64_t kWarmupPlainSteps = 2;  // measure t0 before the first speculative step
constexpr std::int64_t kProbeCandidates = 2;   // a probe is short: cheap when it fails
constexpr std::int64_t kFirstProbeInterval = 8;
constexpr std::int64_t kMaxProbeInterval = 256;
// Draft catch-up runs in chunks: big enough that a step's fixed cost does not dominate, small
// enough that one chunk never stalls the answer noticeably.
constexpr std::int64_t kMinCatchUpChunk = 8;
constexpr std::int64_t kMaxCatchUpChunk = 64;
// Catch-up may use at most this share of the allowance a plain step adds, so that the draft
// gains on the tokens it misses (it catches up a backlog of P tokens within about P steps).
constexpr double kCatchUpShare = 0.5;
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

SpeculationController::SpeculationController(std::int64_t max_candidates, bool adaptive, double draft_cost_ratio)
    : max_candidates_(std::max<std::int64_t>(max_candidates, 0)),
      adaptive_(adaptive),
      draft_cost_ratio_(std::max(draft_cost_ratio, 0.0)) {}

double SpeculationController::acceptance_rate() const {
  const double seen = accepted_ + rejected_;
  return seen > 0 ? accepted_ / seen : 0.0;
}

// Before the draft is measured: its size relative to the main model's times a plain step, and
// at least what its catch-up showed per token (a batched token is never dearer than a decode step).
double SpeculationController::draft_estimate_ms() const {
  if (draft_ms_ >= 0) return draft_ms_;
  return std::max(draft_cost_ratio_ * std::max(plain_ms_, 0.0), std::max(catch_up_ms_, 0.0));
}

// Before a verification is measured: a prompt token of the main model's prefill (a verified row
// does that work and more).
double SpeculationController::row_estimate_ms() const {
  return row_ms_ >= 0 ? row_ms_ : std::max(prefill_row_ms_, 0.0);
}

double SpeculationController::expected_ms_per_token(std::int64_t k) const {
  if (k == 0) return plain_ms_;
  const double alpha = std::min(acceptance_rate(), 0.999);
  const double tokens = (1 - std::pow(alpha, double(k + 1))) / (1 - alpha);
  return (double(k) * draft_estimate_ms() + plain_ms_ + double(k) * row_estimate_ms()) / tokens;
}

std::int64_t SpeculationController::best_k(double alpha) const {
  const double a = std::min(alpha, 0.999);
  std::int64_t best = 0;
  double best_ms = plain_ms_;
  for (std::int64_t k = 1; k <= max_candidates_; ++k) {
    const double tokens = (1 - std::pow(a, double(k + 1))) / (1 - a);
    const double ms = (double(k) * draft_estimate_ms() + plain_ms_ + double(k) * row_estimate_ms()) / tokens;
    if (ms < best_ms) {
      best_ms = ms;
      best = k;
    }
  }
  return best;
}

double SpeculationController::allowance_ms() const { return kFloorSlack * plain_equivalent_ms_ - overhead_ms_; }

SpeculationController::Plan SpeculationController::plan_step(std::int64_t draft_behind) {
  if (!adaptive_ || max_candidates_ == 0) return {max_candidates_, 0};
  if (plain_ms_ < 0 || (plain_steps_ < kWarmupPlainSteps && row_ms_ < 0)) return {};
  // The draft's own pass catches up this many tokens within a proposal; more is exploration.
  const bool draft_ready = draft_behind <= max_candidates_ + 2;
  if (row_ms_ >= 0 && draft_ms_ >= 0 && draft_ready && allowance_ms() >= 0) {
    const std::int64_t k = best_k(acceptance_rate());
    if (k > 0) return {speculative_steps_ >= kPlainRefreshInterval ? 0 : k, 0};
  }
  // Plain decoding wins (or nothing is measured yet). Explore only if perfect acceptance could
  // win; otherwise the draft is off for good, catch-up included.
  if (best_k(1.0) == 0 || plain_steps_ < probe_interval_) return {};
  const double allowance = allowance_ms();
  if (!draft_ready) {
    // The draft falls one token further behind per plain step, and a plain step adds only
    // kFloorSlack·t0 to the allowance: unless a token of catch-up costs well under that, the
    // draft could never catch up within the floor, so it stays off (and costs nothing).
    const double per_token =
        catch_up_ms_ >= 0 ? catch_up_ms_ : draft_cost_ratio_ * (prefill_row_ms_ >= 0 ? prefill_row_ms_ : plain_ms_);
    if (per_token >= kCatchUpShare * kFloorSlack * plain_ms_) return {};
    // Until a chunk is measured, size it as if each token cost a whole draft decode step.
    const double budget_per_token = catch_up_ms_ >= 0 ? catch_up_ms_ : draft_cost_ratio_ * plain_ms_;
    const std::int64_t most = std::min(draft_behind - 1, catch_up_ms_ >= 0 ? kMaxCatchUpChunk : kMinCatchUpChunk);
    const std::int64_t affordable =
        budget_per_token > 0 ? static_cast<std::int64_t>(std::max(allowance, 0.0) / budget_per_token) : most;
    const std::int64_t chunk = std::min(affordable, most);
    return {0, chunk >= std::min(kMinCatchUpChunk, most) ? chunk : 0};
  }
  const std::int64_t k = std::min(kProbeCandidates, max_candidates_);
  // A failed probe costs its draft tokens and verified rows (the main model's token still comes).
  if (double(k) * (draft_estimate_ms() + row_estimate_ms()) > allowance) return {};
  probe_interval_ = probe_interval_ == 0 ? kFirstProbeInterval : std::min(probe_interval_ * 2, kMaxProbeInterval);
  return {k, 0};
}

void SpeculationController::record_prefill(std::int64_t tokens, double ms) {
  if (tokens > 0) smooth_duration(prefill_row_ms_, ms / double(tokens));
}

void SpeculationController::record_plain_step(double step_ms) {
  smooth_duration(plain_ms_, step_ms);
  plain_equivalent_ms_ += step_ms;
  ++plain_steps_;
  speculative_steps_ = 0;
}

void SpeculationController::record_catch_up(std::int64_t tokens, double ms) {
  if (tokens <= 0) return;
  smooth_duration(catch_up_ms_, ms / double(tokens));
  overhead_ms_ += ms;
}

void SpeculationController::record_speculative_step(std::int64_t proposed, std::int64_t accepted, double draft_ms,
                                                    double verify_ms) {
  if (proposed <= 0) return;
  smooth_duration(draft_ms_, draft_ms / double(proposed));
  if (plain_ms_ >= 0) smooth_difference(row_ms_, std::max(0.0, verify_ms - plain_ms_) / double(proposed));
  accepted_ = kCountDecay * accepted_ + double(accepted);
  rejected_ = kCountDecay * rejected_ + (accepted < proposed ? 1.0 : 0.0);
  // Plain decoding would have spent t0 on each token this step produced.
  const double plain_ms = double(accepted + 1) * (plain_ms_ >= 0 ? plain_ms_ : verify_ms);
  plain_equivalent_ms_ += plain_ms;
  overhead_ms_ += draft_ms + verify_ms - plain_ms;
  if (best_k(acceptance_rate()) > 0) probe_interval_ = kFirstProbeInterval;  // speculation pays again
  plain_steps_ = 0;
  ++speculative_steps_;
}

}  // namespace kiln::genai
