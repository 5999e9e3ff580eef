#include "export/scale_estimation.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "export/group_quantizer.hpp"
#include "export/parallel_products.hpp"
#include "util/error.hpp"

namespace kiln::exporter {
namespace {

// NNCF's defaults (AdvancedScaleEstimationParameters): 5 ideal-scale steps, a grid of 5 scales.
constexpr int kInitialSteps = 5;
constexpr int kScaleSteps = 5;
constexpr float kScaleStepFactor = 0.05f;

constexpr std::size_t kPanelRows = 32;  // rows searched in lockstep per task (even: see the codes below)
// NNCF's subset size (AdvancedScaleEstimationParameters.subset_size).
constexpr std::size_t kMeanSubset = 64;

struct Candidate {
  double error = 0;
  std::optional<float> ideal_scale;  // the least-squares scale for these codes
};

// `scale` rounded to f16 with zero point `zero_point`; nullopt when not representable.
std::optional<QuantParams> params_for(float scale, int zero_point) {
  const std::optional<float> stored = stored_scale(scale);
  if (!stored) return std::nullopt;
  return QuantParams{*stored, zero_point};
}

// One row's search as the sequence of candidates NNCF's loops visit: the start; up to
// kInitialSteps ideal scales of the current codes (stopping when one repeats or cannot be
// stored); then each shrunken scale followed by the ideal scale of its codes. Each candidate
// depends on the previous one's result, so rows advance in lockstep (search_rows).
class RowSearch {
 public:
  explicit RowSearch(QuantParams start) : start_(start), best_(start) {}

  // The next candidate to evaluate, or nullopt when the search is over.
  std::optional<QuantParams> propose() {
    for (;;) {
      switch (phase_) {
        case Phase::kStart: return start_;
        case Phase::kIdeal:
          if (step_ < kInitialSteps && ideal_) {
            const std::optional<QuantParams> next = params_for(*ideal_, start_.zero_point);
            if (next && next->scale != current_) {
              current_ = next->scale;
              return next;
            }
          }
          phase_ = Phase::kShrink;
          step_ = 1;
          continue;
        case Phase::kShrink: {
          if (step_ > kScaleSteps) {
            phase_ = Phase::kDone;
            continue;
          }
          const std::optional<QuantParams> shrunk =
              params_for(start_.scale * (1.0f - kScaleStepFactor * float(step_)), start_.zero_point);
          if (shrunk) return shrunk;
          ++step_;
          continue;
        }
        case Phase::kShrinkIdeal: return pending_;
        case Phase::kDone: return std::nullopt;
      }
    }
  }

  // The result of the candidate propose() returned.
  void accept(QuantParams p, const Candidate& c) {
    if (phase_ == Phase::kStart || c.error < best_error_) {
      best_error_ = c.error;
      best_ = p;
    }
    switch (phase_) {
      case Phase::kStart:
        ideal_ = c.ideal_scale;
        current_ = start_.scale;
        phase_ = Phase::kIdeal;
        step_ = 0;
        break;
      case Phase::kIdeal:
        ideal_ = c.ideal_scale;
        ++step_;
        break;
      case Phase::kShrink:
        ++step_;
        if (c.ideal_scale) {
          if (const std::optional<QuantParams> ideal = params_for(*c.ideal_scale, start_.zero_point)) {
            pending_ = *ideal;
            phase_ = Phase::kShrinkIdeal;
          }
        }
        break;
      case Phase::kShrinkIdeal: phase_ = Phase::kShrink; break;
      case Phase::kDone: break;
    }
  }

  QuantParams best() const { return best_; }

 private:
  enum class Phase : std::uint8_t { kStart, kIdeal, kShrink, kShrinkIdeal, kDone };
  QuantParams start_, best_, pending_{};
  double best_error_ = 0;
  Phase phase_ = Phase::kStart;
  int step_ = 0;
  float current_ = 0;
  std::optional<float> ideal_;
};

// out[r] = Σ_i a[r, i]·b[r, i] in f64, i in order, for `rows` rows of n (a's rows a_stride apart,
// b's n apart). NOTE: kDotRows rows advance together: each sum is still one chain in i order
// (the same bits), but a row's chain alone waited on every add (half of search_rows' time).
constexpr std::size_t kDotRows = 4;

void dot_rows(const float* a, std::size_t a_stride, const float* b, std::size_t n, std::size_t rows, double* out) {
  std::size_t r = 0;
  for (; r + kDotRows <= rows; r += kDotRows) {
    double sum[kDotRows] = {};
    for (std::size_t i = 0; i < n; ++i) {
#pragma GCC unroll 4
      for (std::size_t j = 0; j < kDotRows; ++j)
        sum[j] += static_cast<double>(a[(r + j) * a_stride + i]) * b[(r + j) * n + i];
    }
    for (std::size_t j = 0; j < kDotRows; ++j) out[r + j] = sum[j];
  }
  for (; r < rows; ++r) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(a[r * a_stride + i]) * b[r * n + i];
    out[r] = sum;
  }
}

// NOTE: with ŵ = s·l (l the unscaled levels of the codes) a row's error expands to
//   E(s, l) = wᵀHw − 2 s lᵀHw + s² lᵀHl,
// and for fixed codes the best scale is s* = lᵀHw / lᵀHl. Hw and wᵀHw are fixed per row, so each
// candidate costs one l·H, and the rows' l·H of one round are one m-row product with the
// shared H (8-row AVX-512 tiles instead of one-row ones; each element is the same FMA chain).
// w: m rows of n weights, ld apart; params: in, each row's start (round to nearest); out, its best.
void search_rows(WeightScheme scheme, const float* w, std::size_t ld, std::size_t m, std::size_t n, const float* h,
                 std::span<QuantParams> params) {
  const Isa isa = product_isa();
  std::vector<float> hw(m * n, 0.0f);  // [m, n] w·H per row
  kernels::accumulate_product(
      {.a = w, .a_row_stride = ld, .a_k_stride = 1, .b = h, .ldb = n, .c = hw.data(), .ldc = n, .m = m, .n = n, .k = n},
      isa);
  std::vector<double> whw(m), lhw(m), lhl(m);
  dot_rows(w, ld, hw.data(), n, m, whw.data());
  std::vector<RowSearch> rows;
  for (std::size_t r = 0; r < m; ++r) rows.emplace_back(params[r]);
  std::vector<float> levels(m * n), lh(m * n), w_hat(n);  // [m, n] each
  std::vector<int> codes(n);
  std::vector<std::optional<QuantParams>> proposal(m);
  for (;;) {
    bool any = false;
    for (std::size_t r = 0; r < m; ++r) {
      proposal[r] = rows[r].propose();
      float* level = levels.data() + r * n;
      if (!proposal[r]) {
        std::fill(level, level + n, 0.0f);
        continue;
      }
      any = true;
      fake_quantize(scheme, {w + r * ld, n}, *proposal[r], w_hat, codes);
      for (std::size_t i = 0; i < n; ++i) level[i] = unscaled_level(scheme, codes[i], proposal[r]->zero_point);
    }
    if (!any) break;
    dot_rows(levels.data(), n, hw.data(), n, m, lhw.data());
    std::fill(lh.begin(), lh.end(), 0.0f);
    kernels::accumulate_product({.a = levels.data(),
                                 .a_row_stride = n,
                                 .a_k_stride = 1,
                                 .b = h,
                                 .ldb = n,
                                 .c = lh.data(),
                                 .ldc = n,
                                 .m = m,
                                 .n = n,
                                 .k = n},
                                isa);
    dot_rows(levels.data(), n, lh.data(), n, m, lhl.data());
    for (std::size_t r = 0; r < m; ++r) {
      if (!proposal[r]) continue;
      const double s = proposal[r]->scale;
      Candidate c;
      c.error = whw[r] - 2.0 * s * lhw[r] + s * s * lhl[r];
      if (lhl[r] > 0.0) c.ideal_scale = static_cast<float>(lhw[r] / lhl[r]);
      rows[r].accept(*proposal[r], c);
    }
  }
  for (std::size_t r = 0; r < m; ++r) params[r] = rows[r].best();
}

}  // namespace

std::vector<float> hessian_block_f32(const InputStatistics& stats, std::size_t first, std::size_t size) {
  const std::vector<double> block =
      stats.hessian_block(static_cast<std::int64_t>(first), static_cast<std::int64_t>(size));
  return {block.begin(), block.end()};
}

std::vector<float> sample_mean_gram(const InputStatistics& stats, std::size_t first, std::size_t size) {
  const auto in = static_cast<std::size_t>(stats.in());
  const auto samples = static_cast<std::size_t>(stats.num_samples());
  if (samples == 0 || first >= in)
    fail(ErrorKind::kInternal, "scale estimation: no per-sample means from column {}", first);
  const std::size_t n = std::min(size, in - first);
  const std::vector<std::size_t> subset = stats.sample_subset(kMeanSubset);
  std::vector<double> gram(n * n, 0.0);  // [n, n]
  for (const std::size_t s : subset) {
    const float* mu = stats.sample_means().data() + s * in + first;  // [n]
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) gram[i * n + j] += static_cast<double>(mu[i]) * mu[j];
    }
  }
  std::vector<float> out(n * n);
  for (std::size_t i = 0; i < n * n; ++i) out[i] = static_cast<float>(gram[i] / static_cast<double>(subset.size()));
  return out;
}

QuantParams estimate_group_params(WeightScheme scheme, std::span<const float> w, const float* hessian,
                                  QuantParams start) {
  QuantParams params = start;
  search_rows(scheme, w.data(), w.size(), 1, w.size(), hessian, {&params, 1});
  return params;
}

QuantizedMatrix quantize_with_scale_estimation(std::span<const float> w, std::size_t out, std::size_t in,
                                               WeightScheme scheme, std::size_t group_size,
                                               const InputStatistics& stats, std::string_view name, ThreadPool* pool) {
  if (stats.in() != static_cast<std::int64_t>(in) || stats.num_samples() == 0) {
    fail(ErrorKind::kInternal, "scale estimation of '{}': no per-sample input means of width {}", name, in);
  }
  QuantizedMatrix m(scheme, out, in, group_size);
  const std::size_t groups = (in + group_size - 1) / group_size;
  std::vector<std::vector<float>> grams(groups);  // [groups][n, n]
  run_tasks(pool, groups,
            [&](std::size_t g, std::size_t) { grams[g] = sample_mean_gram(stats, g * group_size, group_size); });
  // Every (group, panel of rows) is a task of one pool call: rows are independent, and a row's
  // result does not depend on its panel or thread, so the bytes are the same for any pool.
  std::vector<QuantParams> params(groups * out);  // [groups, out]: round to nearest's, then the best found
  const std::size_t panels = (out + kPanelRows - 1) / kPanelRows;
  run_tasks(pool, groups * panels, [&](std::size_t task, std::size_t) {
    const std::size_t g = task / panels, r0 = task % panels * kPanelRows, rows = std::min(kPanelRows, out - r0);
    const std::size_t first = g * group_size, n = std::min(group_size, in - first);
    QuantParams* p = params.data() + g * out + r0;
    for (std::size_t r = 0; r < rows; ++r) p[r] = rtn_params(scheme, w.subspan((r0 + r) * in + first, n));
    search_rows(scheme, w.data() + r0 * in + first, in, rows, n, grams[g].data(), {p, rows});
  });
  // Codes in panels of kPanelRows (even) rows: 4-bit codes and zero points are packed flat across
  // rows, and an even number of rows always ends on a byte boundary, so no byte is shared.
  run_tasks(pool, panels, [&](std::size_t panel, std::size_t) {
    const std::size_t r0 = panel * kPanelRows, r1 = std::min(out, r0 + kPanelRows);
    for (std::size_t r = r0; r < r1; ++r) {
      for (std::size_t g = 0; g < groups; ++g) {
        const QuantParams p = params[g * out + r];
        m.set_params(r, g, p);
        for (std::size_t c = g * group_size; c < std::min(in, (g + 1) * group_size); ++c) {
          m.set_code(r, c, quantize_value(scheme, w[r * in + c], p));
        }
      }
    }
  });
  return m;
}

}  // namespace kiln::exporter
