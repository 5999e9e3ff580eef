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

void fake_quantize(WeightScheme scheme, std::span<const float> w, QuantParams params, std::span<float> out,
                   std::span<int> codes) {
  for (std::size_t i = 0; i < w.size(); ++i) {
    const int code = quantize_value(scheme, w[i], params);
    out[i] = dequantize_value(scheme, code, params);
    if (!codes.empty()) codes[i] = code;
  }
}

float unscaled_level(WeightScheme scheme, int code, int zero_point) {
  if (scheme == WeightScheme::kNf4) return kNf4Levels[static_cast<std::size_t>(code)];
  return static_cast<float>(code - zero_point);
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
