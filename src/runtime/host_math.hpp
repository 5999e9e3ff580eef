// Vector math the generation layer runs on the host over rows of logits, whatever device
// computed them (sampling, log-probabilities, evaluation). The runtime picks the kernels: this
// CPU's best ISA level, chosen once.
#pragma once

#include <cstddef>
#include <span>

namespace kiln::runtime {

// log Σ exp(x) over x [count], count >= 1, shifted by max(x) so no term overflows; -inf for a row
// of fully masked logits.
double log_sum_exp(std::span<const float> x);

// The index of the first largest value of x (count >= 1, no NaN).
std::size_t argmax(std::span<const float> x);

}  // namespace kiln::runtime
