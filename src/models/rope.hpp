// Rotary position embedding frequencies, with the scaling variants of Hugging Face's
// ROPE_INIT_FUNCTIONS (none, linear, llama3, longrope within its original context), and the cos/sin tables for a step's
// positions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ir/model_config.hpp"

namespace kiln::models {

// [rotary_dim / 2] inverse frequencies after scaling.
std::vector<double> rope_inverse_frequencies(const ir::ModelConfig& config);

// cos/sin [positions, rotary_dim / 2] for the given positions, times `magnitude` (LongRoPE's
// attention_factor; 1 otherwise).
void fill_rotary_table(std::span<const double> inv_freq, std::span<const std::int64_t> positions, float* cos_out,
                       float* sin_out, double magnitude = 1.0);

}  // namespace kiln::models
