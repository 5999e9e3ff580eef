#include "kernels/reference/elementwise.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::kernels::reference {

void rms_norm(const float* x, const float* gain, double eps, std::int64_t rows, std::int64_t dim, float* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    double sum_sq = 0.0;
    for (std::int64_t i = 0; i < dim; ++i) sum_sq += double(xr[i]) * xr[i];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / double(dim) + eps);
    float* o = out + r * dim;
    for (std::int64_t i = 0; i < dim; ++i) o[i] = static_cast<float>(xr[i] * inv_rms * gain[i]);
  }
}

void add(float* acc, const float* x, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) acc[i] += x[i];
}

void silu_mul(const float* gate, const float* up, std::int64_t count, float* out) {
  for (std::int64_t i = 0; i < count; ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void rope_rotate_half(float* x, std::int64_t rows, std::int64_t heads, std::int64_t head_dim, const float* cos,
                      const float* sin) {
  const std::int64_t half = head_dim / 2;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* c = cos + r * half;
    const float* s = sin + r * half;
    for (std::int64_t h = 0; h < heads; ++h) {
      float* v = x + (r * heads + h) * head_dim;
      for (std::int64_t i = 0; i < half; ++i) {
        const double a = v[i], b = v[i + half];
        v[i] = static_cast<float>(a * c[i] - b * s[i]);
        v[i + half] = static_cast<float>(b * c[i] + a * s[i]);
      }
    }
  }
}

double log_sum_exp(const float* x, std::int64_t count) {
  double top = x[0];
  for (std::int64_t i = 1; i < count; ++i) top = std::max(top, double(x[i]));
  if (std::isinf(top)) return top;
  double sum = 0.0;
  for (std::int64_t i = 0; i < count; ++i) sum += std::exp(double(x[i]) - top);
  return top + std::log(sum);
}

std::int64_t argmax(const float* x, std::int64_t count) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < count; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

}  // namespace kiln::kernels::reference
