// Scalar reference twins of the matmul kernels, on the canonical layout (weight_format.hpp).
// They define each family's arithmetic and accumulate in double, so they are the more exact
// side of every comparison; they are also the kernels of the kScalar ISA level.
#pragma once

#include <cstddef>

#include "ir/weight_format.hpp"
#include "kernels/activation_quant.hpp"

namespace kiln::kernels::reference {

// kInt8 mode: for each block of `block_columns` columns (int8_block_columns), the exact integer
// Σ (code - zp) · q times weight scale times activation scale, summed over blocks:
//   y[i, r] = Σ_b s_w[r, g(b)] · s_a[i, h(b)] · Σ_{k∈b} (code[r, k] - zp[r, g(b)]) · q[i, k]
// Integer schemes only. Rows [row_begin, row_end) of W, all xq.n activation rows.
void matmul_int8_activations(const WeightView& w, const QuantizedActivations& xq, std::size_t block_columns,
                             const float* bias, float* y, std::size_t y_stride, std::size_t row_begin,
                             std::size_t row_end);

// kF32 mode: y[i, r] = Σ_k dequant(W)[r, k] · x[i, k]; for bf16 weights x is first rounded to
// bf16 (the vdpbf16ps / AMX-BF16 semantics).
void matmul_f32_activations(const WeightView& w, const float* x, std::size_t n, const float* bias, float* y,
                            std::size_t y_stride, std::size_t row_begin, std::size_t row_end);

}  // namespace kiln::kernels::reference
