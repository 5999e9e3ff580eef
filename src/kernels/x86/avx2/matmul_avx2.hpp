// Internal: the AVX2 kernel families register themselves into the avx2 table.
#pragma once

#include "kernels/matmul_table.hpp"

namespace kiln::kernels::avx2 {

void register_int8_kernels(MatmulTable& table);       // int4 / int8 gemvs and the int8 gemms (maddubs)
void register_int4_gemm_kernels(MatmulTable& table);  // the int4 gemms
void register_float_kernels(MatmulTable& table);      // every scheme × f32 activations
void quantize_activations(const float* x, const QuantizedActivations& q, std::size_t row_begin, std::size_t row_end);

}  // namespace kiln::kernels::avx2
