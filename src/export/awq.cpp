#include "export/awq.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "export/group_quantizer.hpp"

namespace kiln::exporter {
namespace {

constexpr int kGridPoints = 20;  // α = 0, 0.05, ..., 0.95, as the paper's search
constexpr double kMinScale = 1e-4;

// Ŵ = Q(W·s) / s for the target, into w_hat [out, in].
void fake_quantize_scaled(const AwqTarget& t, std::size_t in, std::span<const double> s, std::vector<float>& scaled,
                          std::vector<float>& w_hat) {
  scaled.resize(t.out * in);
  w_hat.resize(t.out * in);
  for (std::size_t r = 0; r < t.out; ++r) {
    for (std::size_t c = 0; c < in; ++c) scaled[r * in + c] = static_cast<float>(t.w[r * in + c] * s[c]);
  }
  fake_quantize_rtn(t.scheme, scaled, t.out, in, t.group_size, w_hat);
  for (std::size_t r = 0; r < t.out; ++r) {
    for (std::size_t c = 0; c < in; ++c) w_hat[r * in + c] = static_cast<float>(w_hat[r * in + c] / s[c]);
  }
}

// The output error Σ over calibration tokens x and outputs o of ((W - Ŵ) x)_o², as Σ_o dᵀ H d
// with d = row o of W - Ŵ and H = Σ x xᵀ [in, in] over every token (`hessian` non-empty), or
// else summed over the sampled token rows.
double output_error(const AwqTarget& t, std::size_t in, std::span<const double> s, const InputStatistics& stats,
                    std::span<const float> hessian, std::vector<float>& scaled, std::vector<float>& w_hat) {
  fake_quantize_scaled(t, in, s, scaled, w_hat);
  std::vector<float> diff(in);  // [in] one row of W - Ŵ
  const std::int64_t num_rows = hessian.empty() ? stats.num_rows() : static_cast<std::int64_t>(in);
  const float* vectors = hessian.empty() ? stats.rows().data() : hessian.data();
  double total = 0;
  for (std::size_t r = 0; r < t.out; ++r) {
    for (std::size_t c = 0; c < in; ++c) diff[c] = t.w[r * in + c] - w_hat[r * in + c];
    // Rows of H give (H d)_k, summed against d_k; sampled rows x give (x·d)², summed.
    for (std::int64_t k = 0; k < num_rows; ++k) {
      const float* x = vectors + static_cast<std::size_t>(k) * in;
      const float dot = dot_lanes(diff.data(), x, 0, in);
      total += hessian.empty() ? static_cast<double>(dot) * dot : static_cast<double>(dot) * diff[static_cast<std::size_t>(k)];
    }
  }
  return total;
}

}  // namespace

std::vector<double> search_awq_scales(std::span<const AwqTarget> targets, std::size_t in, const InputStatistics& stats) {
  std::vector<double> best(in, 1.0);
  const bool full = stats.hessian_mode() == HessianMode::kFull;
  if ((!full && stats.num_rows() == 0) || stats.num_tokens() == 0) return best;
  std::vector<float> hessian;  // [in, in] Σ x xᵀ when kept in full, else empty
  if (full) {
    const std::vector<double> h = stats.hessian_block(0, static_cast<std::int64_t>(in));
    hessian.assign(h.begin(), h.end());
  }
  std::vector<double> magnitude(in);  // [in] mean |x| per channel
  for (std::size_t c = 0; c < in; ++c) magnitude[c] = stats.mean_abs(static_cast<std::int64_t>(c));
  std::vector<float> scaled, w_hat;
  std::vector<double> s(in);
  double best_error = std::numeric_limits<double>::infinity();
  for (int step = 0; step < kGridPoints; ++step) {
    const double alpha = static_cast<double>(step) / kGridPoints;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (std::size_t c = 0; c < in; ++c) {
      s[c] = std::max(std::pow(magnitude[c], alpha), kMinScale);
      lo = std::min(lo, s[c]);
      hi = std::max(hi, s[c]);
    }
    // Normalised so the scales straddle 1 (the paper's s / sqrt(max · min)).
    const double norm = std::sqrt(lo * hi);
    for (double& v : s) v /= norm;
    double error = 0;
    for (const AwqTarget& t : targets) error += output_error(t, in, s, stats, hessian, scaled, w_hat);
    if (error < best_error) {
      best_error = error;
      best = s;
    }
  }
  return best;
}

void scale_input_channels(std::span<const AwqTarget> targets, std::size_t in, std::span<const double> s) {
  for (const AwqTarget& t : targets) {
    for (std::size_t r = 0; r < t.out; ++r) {
      for (std::size_t c = 0; c < in; ++c) t.w[r * in + c] = static_cast<float>(t.w[r * in + c] * s[c]);
    }
  }
}

}  // namespace kiln::exporter
