#include "export/group_quantizer.hpp"

#include <algorithm>
#include <cmath>

#include "util/half.hpp"

namespace kiln::exporter {

std::optional<float> stored_scale(float scale) {
  if (!std::isfinite(scale)) return std::nullopt;
  const float rounded = f16_to_f32(f32_to_f16(scale));
  if (!std::isfinite(rounded) || rounded == 0.0f) return std::nullopt;
  return rounded;
}

namespace {

// nearbyint without a libm call (the baseline build has no SSE4.1 round), so the loops below
// vectorise: adding 1.5·2²³ leaves only integers representable, rounded to even as nearbyint
// does. Exact for |v| <= 2²², which the callers' clamp to the code range guarantees.
inline float round_half_even(float v) {
  constexpr float kMagic = 12582912.0f;
  return (v + kMagic) - kMagic;
}

}  // namespace

void fake_quantize(WeightScheme scheme, std::span<const float> w, QuantParams params, std::span<float> out,
                   std::span<int> codes) {
  if (scheme != WeightScheme::kNf4) {
    // quantize_value's arithmetic, inlined: clamping to one step beyond the code range before
    // rounding gives the same codes (rounding is monotonic) and keeps v small for the rounding.
    const float zero = static_cast<float>(params.zero_point);
    const float lo = static_cast<float>(min_code(scheme)), hi = static_cast<float>(max_code(scheme));
    for (std::size_t i = 0; i < w.size(); ++i) {
      const float v = std::min(std::max(w[i] / params.scale + zero, lo - 1.0f), hi + 1.0f);
      const float code = std::min(std::max(round_half_even(v), lo), hi);
      out[i] = (code - zero) * params.scale;
      if (!codes.empty()) codes[i] = static_cast<int>(code);
    }
    return;
  }
  for (std::size_t i = 0; i < w.size(); ++i) {
    const int code = quantize_value(scheme, w[i], params);
    out[i] = dequantize_value(scheme, code, params);
    if (!codes.empty()) codes[i] = code;
  }
}

void fake_quantize_rtn(WeightScheme scheme, std::span<const float> w, std::size_t out, std::size_t in,
                       std::size_t group_size, std::span<float> w_hat) {
  for (std::size_t r = 0; r < out; ++r) {
    for (std::size_t first = 0; first < in; first += group_size) {
      const std::size_t n = std::min(group_size, in - first);
      const auto group = w.subspan(r * in + first, n);
      fake_quantize(scheme, group, rtn_params(scheme, group), w_hat.subspan(r * in + first, n));
    }
  }
}

float dot_lanes(const float* a, const float* b, std::size_t begin, std::size_t end) {
  float lanes[8] = {};
  std::size_t j = begin;
  for (; j + 8 <= end; j += 8) {
    for (std::size_t k = 0; k < 8; ++k) lanes[k] += a[j + k] * b[j + k];
  }
  float r = 0;
  for (; j < end; ++j) r += a[j] * b[j];
  for (float lane : lanes) r += lane;
  return r;
}

}  // namespace kiln::exporter
