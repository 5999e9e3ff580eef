#include "models/rope.hpp"

#include <cmath>
#include <numbers>

namespace kiln::models {

std::vector<double> rope_inverse_frequencies(const ir::ModelConfig& config) {
  const std::int64_t dim = config.rotary_dim > 0 ? config.rotary_dim : config.head_dim;
  const std::int64_t half = dim / 2;
  std::vector<double> inv_freq(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    inv_freq[i] = 1.0 / std::pow(config.rope_theta, static_cast<double>(2 * i) / static_cast<double>(dim));
  }
  const ir::RopeScaling& s = config.rope_scaling;
  switch (s.type) {
    case ir::RopeScalingType::kNone: break;
    case ir::RopeScalingType::kLinear:
      for (double& f : inv_freq) f /= s.factor;
      break;
    case ir::RopeScalingType::kLlama3: {
      // Long wavelengths are slowed by `factor`, short ones kept, the band between blended.
      const double old_context = static_cast<double>(s.original_max_position_embeddings);
      const double low_freq_wavelen = old_context / s.low_freq_factor;
      const double high_freq_wavelen = old_context / s.high_freq_factor;
      for (double& f : inv_freq) {
        const double wavelen = 2.0 * std::numbers::pi / f;
        if (wavelen > low_freq_wavelen) {
          f /= s.factor;
        } else if (wavelen >= high_freq_wavelen) {
          const double smooth = (old_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
          f = (1.0 - smooth) * f / s.factor + smooth * f;
        }
      }
      break;
    }
    case ir::RopeScalingType::kLongRope:
      // Contexts within original_max_position_embeddings use the short factors; the model
      // refuses positions beyond it (LlamaModel), where HF would switch to the long ones.
      for (std::int64_t i = 0; i < half; ++i) inv_freq[i] /= s.short_factor[static_cast<std::size_t>(i)];
      break;
  }
  return inv_freq;
}

void fill_rotary_table(std::span<const double> inv_freq, std::span<const std::int64_t> positions, float* cos_out,
                       float* sin_out, double magnitude) {
  const std::size_t half = inv_freq.size();
  for (std::size_t r = 0; r < positions.size(); ++r) {
    const double p = static_cast<double>(positions[r]);
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = p * inv_freq[i];
      cos_out[r * half + i] = static_cast<float>(magnitude * std::cos(angle));
      sin_out[r * half + i] = static_cast<float>(magnitude * std::sin(angle));
    }
  }
}

}  // namespace kiln::models
