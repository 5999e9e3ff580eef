#include "export/scale_estimation.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "export/group_quantizer.hpp"
#include "util/error.hpp"

namespace kiln::exporter {
namespace {

// NNCF's defaults (AdvancedScaleEstimationParameters): 5 ideal-scale steps, a grid of 5 scales.
constexpr int kInitialSteps = 5;
constexpr int kScaleSteps = 5;
constexpr float kScaleStepFactor = 0.05f;

class GroupSearch {
 public:
  GroupSearch(WeightScheme scheme, std::span<const float> w, const double* hessian, QuantParams start)
      : scheme_(scheme), w_(w), h_(hessian), w_hat_(w.size()), codes_(w.size()), best_(start), best_error_(error(start)) {}

  // Evaluates `scale` (with the start's zero point); keeps it if better. Returns its params.
  std::optional<QuantParams> consider(float scale) {
    const std::optional<float> stored = stored_scale(scale);
    if (!stored) return std::nullopt;
    const QuantParams p{*stored, best_.zero_point};
    const double e = error(p);
    if (e < best_error_) {
      best_error_ = e;
      best_ = p;
    }
    return p;
  }

  // The least-squares scale for the codes `p` assigns: argmin_s (w - s·l)ᵀ H (w - s·l) = lᵀHw / lᵀHl.
  std::optional<float> ideal_scale(QuantParams p) {
    fake_quantize(scheme_, w_, p, w_hat_, codes_);
    const std::size_t n = w_.size();
    std::vector<double>& level = level_;
    level.resize(n);
    for (std::size_t i = 0; i < n; ++i) level[i] = unscaled_level(scheme_, codes_[i], p.zero_point);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double* h = h_ + i * n;
      double hw = 0, hl = 0;
      for (std::size_t j = 0; j < n; ++j) {
        hw += h[j] * w_[j];
        hl += h[j] * level[j];
      }
      num += level[i] * hw;
      den += level[i] * hl;
    }
    if (!(den > 0.0)) return std::nullopt;
    return static_cast<float>(num / den);
  }

  QuantParams best() const { return best_; }

 private:
  double error(QuantParams p) {
    fake_quantize(scheme_, w_, p, w_hat_);
    return weighted_error(w_, w_hat_, h_);
  }

  WeightScheme scheme_;
  std::span<const float> w_;
  const double* h_;
  std::vector<float> w_hat_;
  std::vector<int> codes_;
  std::vector<double> level_;
  QuantParams best_;
  double best_error_;
};

}  // namespace

QuantParams estimate_group_params(WeightScheme scheme, std::span<const float> w, const double* hessian,
                                  QuantParams start) {
  GroupSearch search(scheme, w, hessian, start);
  for (int step = 0; step < kInitialSteps; ++step) {
    const std::optional<float> s = search.ideal_scale(search.best());
    if (!s || !search.consider(*s)) break;
  }
  for (int step = 1; step <= kScaleSteps; ++step) {
    const float factor = 1.0f - kScaleStepFactor * static_cast<float>(step);
    const std::optional<QuantParams> shrunk = search.consider(start.scale * factor);
    if (!shrunk) continue;
    if (const std::optional<float> s = search.ideal_scale(*shrunk)) search.consider(*s);
  }
  return search.best();
}

QuantizedMatrix quantize_with_scale_estimation(std::span<const float> w, std::size_t out, std::size_t in,
                                               WeightScheme scheme, std::size_t group_size,
                                               const InputStatistics& stats, std::string_view name) {
  if (stats.in() != static_cast<std::int64_t>(in) || stats.hessian_mode() == HessianMode::kNone) {
    fail(ErrorKind::kInternal, "scale estimation of '{}': no input statistics of width {}", name, in);
  }
  QuantizedMatrix m(scheme, out, in, group_size);
  for (std::size_t first = 0, g = 0; first < in; first += group_size, ++g) {
    const std::size_t n = std::min(group_size, in - first);
    const std::vector<double> h = stats.hessian_block(static_cast<std::int64_t>(first), static_cast<std::int64_t>(group_size));  // [n, n]
    for (std::size_t r = 0; r < out; ++r) {
      const std::span<const float> group = w.subspan(r * in + first, n);
      const QuantParams p = estimate_group_params(scheme, group, h.data(), rtn_params(scheme, group));
      m.set_params(r, g, p);
      for (std::size_t c = 0; c < n; ++c) m.set_code(r, first + c, quantize_value(scheme, group[c], p));
    }
  }
  return m;
}

}  // namespace kiln::exporter
