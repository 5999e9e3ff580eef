#include "export/awq.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "export/group_quantizer.hpp"
#include "export/parallel_products.hpp"

namespace kiln::exporter {
namespace {

constexpr int kGridPoints = 20;  // α = 0, 0.05, ..., 0.95, as the paper's search
// NNCF's subset size (AdvancedAWQParameters.subset_size): the error is measured on the mean
// inputs of these many samples. Against all 128 of the default recipe it cut the export's
// CPU time by a tenth at the same perplexity (docs/PERFORMANCE_NOTES.md, export speed).
constexpr std::size_t kErrorSubset = 32;
constexpr double kMinScale = 1e-4;
constexpr std::size_t kPanelRows = 64;  // weight rows per product in the error sums

// What the output error is measured against: B [in, n] = the n per-sample mean inputs of NNCF's
// subset as columns (a row d of W - Ŵ adds Σ_j (d·B)_j², the shift of each sample's mean
// output), as NNCF's AWQ.
struct ErrorBasis {
  std::vector<float> b;  // [in, n]
  std::size_t n = 0;
};

ErrorBasis error_basis(std::size_t in, const InputStatistics& stats) {
  const std::vector<std::size_t> subset = stats.sample_subset(kErrorSubset);
  ErrorBasis basis;
  basis.n = subset.size();
  basis.b.resize(in * basis.n);
  for (std::size_t j = 0; j < basis.n; ++j) {
    for (std::size_t c = 0; c < in; ++c) basis.b[c * basis.n + j] = stats.sample_means()[subset[j] * in + c];
  }
  return basis;
}

struct Scratch {
  std::vector<float> scaled;   // [in] one row of W·s, then Q(W·s)
  std::vector<float> diff;     // [kPanelRows, in] rows of W - Q(W·s)/s
  std::vector<float> product;  // [kPanelRows, n] the same rows times B
};

// Rows [first, first + m) of W - Ŵ, Ŵ = Q(W·s)/s, into scratch.diff.
void panel_difference(const AwqTarget& t, std::size_t in, std::span<const double> s, std::size_t first, std::size_t m,
                      Scratch& scratch) {
  scratch.scaled.resize(in);
  scratch.diff.resize(m * in);
  for (std::size_t r = 0; r < m; ++r) {
    const float* w = t.w.data() + (first + r) * in;
    for (std::size_t c = 0; c < in; ++c) scratch.scaled[c] = static_cast<float>(w[c] * s[c]);
    fake_quantize_rtn(t.scheme, scratch.scaled, 1, in, t.group_size, scratch.scaled);
    float* d = scratch.diff.data() + r * in;
    for (std::size_t c = 0; c < in; ++c) d[c] = w[c] - static_cast<float>(scratch.scaled[c] / s[c]);
  }
}

// start + Σ v[i]² in i order. A function of its own so the sum stays in a register: inlined
// into the search's task, GCC kept it in memory and each add waited on the previous one's store.
[[gnu::noinline]] double add_squares(double start, const float* v, std::size_t count) {
  double sum = start;
  for (std::size_t i = 0; i < count; ++i) sum += double(v[i]) * v[i];
  return sum;
}

// The output error Σ over samples s and outputs o of ((W - Ŵ) μ_s)_o², in panels of rows
// multiplied by B at once.
double output_error(const AwqTarget& t, std::size_t in, std::span<const double> s, const ErrorBasis& basis,
                    Scratch& scratch) {
  double total = 0;
  for (std::size_t first = 0; first < t.out; first += kPanelRows) {
    const std::size_t m = std::min(kPanelRows, t.out - first);
    panel_difference(t, in, s, first, m, scratch);
    scratch.product.assign(m * basis.n, 0.0f);
    kernels::accumulate_product({.a = scratch.diff.data(),
                                 .a_row_stride = in,
                                 .a_k_stride = 1,
                                 .b = basis.b.data(),
                                 .ldb = basis.n,
                                 .c = scratch.product.data(),
                                 .ldc = basis.n,
                                 .m = m,
                                 .n = basis.n,
                                 .k = in},
                                product_isa());
    total = add_squares(total, scratch.product.data(), m * basis.n);
  }
  return total;
}

// s = mean|x|^α, clamped, normalised so the scales straddle 1 (the paper's s / sqrt(max · min)).
std::vector<double> scales_for(std::span<const double> magnitude, double alpha) {
  std::vector<double> s(magnitude.size());
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (std::size_t c = 0; c < s.size(); ++c) {
    s[c] = std::max(std::pow(magnitude[c], alpha), kMinScale);
    lo = std::min(lo, s[c]);
    hi = std::max(hi, s[c]);
  }
  const double norm = std::sqrt(lo * hi);
  for (double& v : s) v /= norm;
  return s;
}

}  // namespace

std::vector<double> search_awq_scales(std::span<const AwqTarget> targets, std::size_t in, const InputStatistics& stats,
                                      ThreadPool* pool) {
  if (stats.num_samples() == 0 || stats.num_tokens() == 0) return std::vector<double>(in, 1.0);
  const ErrorBasis basis = error_basis(in, stats);
  std::vector<double> magnitude(in);  // [in] mean |x| per channel
  for (std::size_t c = 0; c < in; ++c) magnitude[c] = stats.mean_abs(static_cast<std::int64_t>(c));
  // Grid points are independent: one task each, so the cores share the search.
  std::vector<Scratch> scratch(thread_count(pool));
  std::vector<double> errors(kGridPoints);
  run_tasks(pool, kGridPoints, [&](std::size_t step, std::size_t thread) {
    const std::vector<double> s = scales_for(magnitude, static_cast<double>(step) / kGridPoints);
    double error = 0;
    for (const AwqTarget& t : targets) error += output_error(t, in, s, basis, scratch[thread]);
    errors[step] = error;
  });
  // The first least error, as a search in α order would keep it.
  const auto best = std::min_element(errors.begin(), errors.end()) - errors.begin();
  return scales_for(magnitude, static_cast<double>(best) / kGridPoints);
}

void scale_input_channels(std::span<const AwqTarget> targets, std::size_t in, std::span<const double> s) {
  for (const AwqTarget& t : targets) {
    for (std::size_t r = 0; r < t.out; ++r) {
      for (std::size_t c = 0; c < in; ++c) t.w[r * in + c] = static_cast<float>(t.w[r * in + c] * s[c]);
    }
  }
}

}  // namespace kiln::exporter
