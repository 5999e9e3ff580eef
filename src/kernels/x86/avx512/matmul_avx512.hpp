// Internal: the AVX-512 kernel families register themselves into the avx512 (and amx) tables.
#pragma once

#include "kernels/matmul_table.hpp"

namespace kiln::kernels::avx512 {

void register_int8_kernels(MatmulTable& table);       // int4 / int8 × int8 activations (VNNI)
void register_int8_gemm_kernels(MatmulTable& table);  // their prefill GEMMs, called by the above
void register_float_kernels(MatmulTable& table);      // every scheme × f32 activations
void quantize_activations(const float* x, const QuantizedActivations& q, std::size_t row_begin, std::size_t row_end);

}  // namespace kiln::kernels::avx512
