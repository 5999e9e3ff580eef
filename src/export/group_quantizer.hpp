// Quantising one group of weights with chosen parameters, on top of the kernels' reference
// (ir/weight_format.hpp): the building block scale estimation, GPTQ and AWQ's search share.
// Scales are always rounded to f16 first, so what is evaluated is what model.bin will store.
#pragma once

#include <optional>
#include <span>

#include "ir/weight_format.hpp"

namespace kiln::exporter {

// `scale` rounded to the f16 the IR stores; nullopt when that is zero, not finite or out of range.
std::optional<float> stored_scale(float scale);

// out[i] = dequantize(quantize(w[i])) with `params`; codes[i] too when `codes` is not empty.
void fake_quantize(WeightScheme scheme, std::span<const float> w, QuantParams params, std::span<float> out,
                   std::span<int> codes = {});

// The value a code stands for before scaling (code - zero point, or the NF4 level).
inline float unscaled_level(WeightScheme scheme, int code, int zero_point) {
  if (scheme == WeightScheme::kNf4) return kNf4Levels[static_cast<std::size_t>(code)];
  return static_cast<float>(code - zero_point);
}

// Fake-quantises an [out, in] f32 matrix with round to nearest, group by group (the oracle
// AWQ's search compares against).
void fake_quantize_rtn(WeightScheme scheme, std::span<const float> w, std::size_t out, std::size_t in,
                       std::size_t group_size, std::span<float> w_hat);

// Σ_j a[j] · b[j] over [begin, end) in eight independent lanes, so the compiler vectorises
// without reassociating (no -ffast-math); the result depends only on the inputs.
float dot_lanes(const float* a, const float* b, std::size_t begin, std::size_t end);

}  // namespace kiln::exporter
