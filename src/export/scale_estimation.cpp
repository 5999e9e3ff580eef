#include "export/scale_estimation.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include "export/float_products.hpp"
#include "export/group_quantizer.hpp"
#include "util/error.hpp"

namespace kiln::exporter {
namespace {

// NNCF's defaults (AdvancedScaleEstimationParameters): 5 ideal-scale steps, a grid of 5 scales.
constexpr int kInitialSteps = 5;
constexpr int kScaleSteps = 5;
constexpr float kScaleStepFactor = 0.05f;

// v·H [n] for H [n, n] row-major (H symmetric, so also H v) into out, summed in f32 with the
// export's product kernel; then Σ v_i (vH)_i in f64.
double quadratic_form(const float* h, const float* v, std::size_t n, std::vector<float>& vh) {
  vh.assign(n, 0.0f);
  accumulate_product({.a = v, .a_row_stride = n, .a_k_stride = 1, .b = h, .ldb = n, .c = vh.data(), .ldc = n,
                      .m = 1, .n = n, .k = n},
                     product_isa());
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += static_cast<double>(v[i]) * vh[i];
  return total;
}

// NOTE: with ŵ = s·l (l the unscaled levels of the codes) the error expands to
//   E(s, l) = wᵀHw − 2 s lᵀHw + s² lᵀHl,
// and for fixed codes the best scale is s* = lᵀHw / lᵀHl. Hw and wᵀHw are fixed per group, so
// each candidate costs one quadratic form lᵀHl instead of several O(n²) passes.
class GroupSearch {
 public:
  GroupSearch(WeightScheme scheme, std::span<const float> w, const float* hessian, QuantParams start)
      : scheme_(scheme), w_(w), h_(hessian), w_hat_(w.size()), codes_(w.size()), level_(w.size()), best_(start) {
    whw_ = quadratic_form(h_, w_.data(), w.size(), hw_);
    const Candidate c = evaluate(start);
    best_error_ = c.error;
    start_ideal_ = c.ideal_scale;
  }

  // The ideal scale of the start's codes (computed with it).
  std::optional<float> start_ideal() const { return start_ideal_; }

  struct Candidate {
    double error = 0;
    std::optional<float> ideal_scale;  // the least-squares scale for these codes
  };

  // Quantises with `p` and scores it; keeps it when it beats the best so far.
  Candidate consider(QuantParams p) {
    const Candidate c = evaluate(p);
    if (c.error < best_error_) {
      best_error_ = c.error;
      best_ = p;
    }
    return c;
  }

  // `scale` rounded to f16, with the start's zero point; nullopt when not representable.
  std::optional<QuantParams> params_for(float scale) const {
    const std::optional<float> stored = stored_scale(scale);
    if (!stored) return std::nullopt;
    return QuantParams{*stored, best_.zero_point};
  }

  QuantParams best() const { return best_; }

 private:
  Candidate evaluate(QuantParams p) {
    fake_quantize(scheme_, w_, p, w_hat_, codes_);
    const std::size_t n = w_.size();
    double lhw = 0;
    for (std::size_t i = 0; i < n; ++i) {
      level_[i] = unscaled_level(scheme_, codes_[i], p.zero_point);
      lhw += static_cast<double>(level_[i]) * hw_[i];
    }
    const double lhl = quadratic_form(h_, level_.data(), n, lh_);
    Candidate c;
    c.error = whw_ - 2.0 * p.scale * lhw + static_cast<double>(p.scale) * p.scale * lhl;
    if (lhl > 0.0) c.ideal_scale = static_cast<float>(lhw / lhl);
    return c;
  }

  WeightScheme scheme_;
  std::span<const float> w_;
  const float* h_;
  std::vector<float> hw_;  // [n] H w
  std::vector<float> lh_;  // [n] scratch: H l
  double whw_ = 0;
  std::vector<float> w_hat_;
  std::vector<int> codes_;
  std::vector<float> level_;
  QuantParams best_;
  double best_error_ = 0;
  std::optional<float> start_ideal_;
};

}  // namespace

std::vector<float> hessian_block_f32(const InputStatistics& stats, std::size_t first, std::size_t size) {
  const std::vector<double> block = stats.hessian_block(static_cast<std::int64_t>(first), static_cast<std::int64_t>(size));
  return {block.begin(), block.end()};
}

QuantParams estimate_group_params(WeightScheme scheme, std::span<const float> w, const float* hessian,
                                  QuantParams start) {
  GroupSearch search(scheme, w, hessian, start);
  // Ideal-scale steps from the start; the codes settle after a step or two.
  std::optional<float> ideal = search.start_ideal();
  float current = start.scale;
  for (int step = 0; step < kInitialSteps && ideal; ++step) {
    const std::optional<QuantParams> next = search.params_for(*ideal);
    if (!next || next->scale == current) break;
    current = next->scale;
    ideal = search.consider(*next).ideal_scale;
  }
  // Shrunken scales, each followed by the ideal scale of the codes it gives.
  for (int step = 1; step <= kScaleSteps; ++step) {
    const std::optional<QuantParams> shrunk = search.params_for(start.scale * (1.0f - kScaleStepFactor * float(step)));
    if (!shrunk) continue;
    const GroupSearch::Candidate c = search.consider(*shrunk);
    if (!c.ideal_scale) continue;
    if (const std::optional<QuantParams> ideal = search.params_for(*c.ideal_scale)) search.consider(*ideal);
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
  // Rows are independent: split them over the cores. Each row's result does not depend on the
  // split, so the output is the same bytes for any thread count.
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  for (std::size_t first = 0, g = 0; first < in; first += group_size, ++g) {
    const std::size_t n = std::min(group_size, in - first);
    const std::vector<float> h = hessian_block_f32(stats, first, group_size);  // [n, n]
    std::vector<QuantParams> params(out);
    const auto work = [&](std::size_t t) {
      for (std::size_t r = t; r < out; r += threads) {
        const std::span<const float> group = w.subspan(r * in + first, n);
        params[r] = estimate_group_params(scheme, group, h.data(), rtn_params(scheme, group));
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads && t < out; ++t) pool.emplace_back(work, t);
    work(0);
    for (std::thread& th : pool) th.join();
    // Codes are written here, single-threaded: 4-bit rows may share a byte.
    for (std::size_t r = 0; r < out; ++r) {
      m.set_params(r, g, params[r]);
      for (std::size_t c = 0; c < n; ++c) m.set_code(r, first + c, quantize_value(scheme, w[r * in + first + c], params[r]));
    }
  }
  return m;
}

}  // namespace kiln::exporter
