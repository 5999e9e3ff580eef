#include "export/gptq.hpp"

#include <algorithm>
#include <cmath>

#include "export/scale_estimation.hpp"
#include "util/error.hpp"

namespace kiln::exporter {
namespace {

constexpr double kDampPercent = 0.01;

// In place: the lower Cholesky factor L of a [n, n] matrix (H = L Lᵀ); upper triangle left as is.
void cholesky_lower(std::vector<double>& a, std::size_t n, std::string_view name) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0.0)) fail("GPTQ on '{}': the input Hessian is not positive definite at column {}", name, j);
    const double l = std::sqrt(d);
    a[j * n + j] = l;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / l;
    }
  }
}

}  // namespace

std::vector<double> inverse_cholesky_upper(std::vector<double> h, std::size_t n, std::string_view name) {
  cholesky_lower(h, n, name);
  // L⁻¹ by forward substitution, column by column: inv [n, n] lower.
  std::vector<double> inv(n * n, 0.0);
  for (std::size_t c = 0; c < n; ++c) {
    inv[c * n + c] = 1.0 / h[c * n + c];
    for (std::size_t i = c + 1; i < n; ++i) {
      double s = 0;
      for (std::size_t k = c; k < i; ++k) s -= h[i * n + k] * inv[k * n + c];
      inv[i * n + c] = s / h[i * n + i];
    }
  }
  // H⁻¹ = L⁻ᵀ L⁻¹: element (i, j) = Σ_k inv[k, i] inv[k, j], k >= max(i, j).
  std::vector<double> hinv(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i; j < n; ++j) {
      double s = 0;
      for (std::size_t k = j; k < n; ++k) s += inv[k * n + i] * inv[k * n + j];
      hinv[i * n + j] = hinv[j * n + i] = s;
    }
  }
  // Upper factor: H⁻¹ = Uᵀ U with U = Lᵀ of H⁻¹'s lower factor.
  cholesky_lower(hinv, n, name);
  std::vector<double> upper(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) upper[j * n + i] = hinv[i * n + j];
  }
  return upper;
}

QuantizedMatrix quantize_gptq(std::vector<float> w, std::size_t out, std::size_t in, WeightScheme scheme,
                              std::size_t group_size, const InputStatistics& stats, bool scale_estimation,
                              std::string_view name) {
  if (stats.in() != static_cast<std::int64_t>(in) || stats.hessian_mode() != HessianMode::kFull) {
    fail(ErrorKind::kInternal, "GPTQ of '{}': no full input Hessian of width {}", name, in);
  }
  std::vector<double> h(in * in);  // [in, in]
  double diag_sum = 0;
  for (std::size_t i = 0; i < in; ++i) {
    for (std::size_t j = 0; j < in; ++j)
      h[i * in + j] = stats.hessian(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
    diag_sum += h[i * in + i];
  }
  // Dead inputs (never non-zero in calibration) get a unit diagonal and zero weights, as the paper.
  for (std::size_t i = 0; i < in; ++i) {
    if (h[i * in + i] == 0.0) {
      h[i * in + i] = 1.0;
      for (std::size_t r = 0; r < out; ++r) w[r * in + i] = 0.0f;
    }
  }
  const double damp = kDampPercent * std::max(diag_sum / static_cast<double>(in), 1e-12);
  for (std::size_t i = 0; i < in; ++i) h[i * in + i] += damp;
  const std::vector<double> u = inverse_cholesky_upper(h, in, name);  // [in, in] upper

  QuantizedMatrix m(scheme, out, in, group_size);
  std::vector<QuantParams> params(out);  // the current group's, per row
  std::vector<float> block;              // [n, n] Hessian block of the current group
  for (std::size_t i = 0; i < in; ++i) {
    if (i % group_size == 0) {
      const std::size_t n = std::min(group_size, in - i);
      if (scale_estimation) block = hessian_block_f32(stats, i, group_size);
      for (std::size_t r = 0; r < out; ++r) {
        const std::span<const float> group(w.data() + r * in + i, n);
        params[r] = rtn_params(scheme, group);
        if (scale_estimation) params[r] = estimate_group_params(scheme, group, block.data(), params[r]);
        m.set_params(r, i / group_size, params[r]);
      }
    }
    const double d = u[i * in + i];
    for (std::size_t r = 0; r < out; ++r) {
      float* row = w.data() + r * in;
      const int code = quantize_value(scheme, row[i], params[r]);
      m.set_code(r, i, code);
      const double err = (static_cast<double>(row[i]) - dequantize_value(scheme, code, params[r])) / d;
      const double* ui = u.data() + i * in;
      for (std::size_t j = i + 1; j < in; ++j) row[j] = static_cast<float>(row[j] - err * ui[j]);
    }
  }
  return m;
}

}  // namespace kiln::exporter
