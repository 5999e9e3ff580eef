// GPTQ (Frantar et al. 2022; NNCF's --gptq): columns are quantised left to right and each
// column's rounding error is spread over the columns not yet quantised, weighted by the inverse
// Hessian of the layer's input (H = Σ x xᵀ over the calibration tokens), so the layer output
// error is minimised rather than the weight error. Group parameters are chosen when a group is
// entered, from the weights as updated so far (by scale estimation when asked, else round to
// nearest). Dampening 1% of the mean diagonal, as NNCF and the paper.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "export/activation_statistics.hpp"
#include "ir/weight_format.hpp"

namespace kiln::exporter {

// `w` [out, in] is consumed (updated in place); `stats` must hold the full xᵀx of its input.
QuantizedMatrix quantize_gptq(std::vector<float> w, std::size_t out, std::size_t in, WeightScheme scheme,
                              std::size_t group_size, const InputStatistics& stats, bool scale_estimation,
                              std::string_view name);

// The upper Cholesky factor U of H⁻¹ (H⁻¹ = Uᵀ U) for a symmetric positive definite H [n, n];
// a kiln::Error naming `name` when H is not positive definite. Exposed for tests.
std::vector<double> inverse_cholesky_upper(std::vector<double> h, std::size_t n, std::string_view name);

}  // namespace kiln::exporter
