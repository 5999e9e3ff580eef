// Internal: what the AVX-512 translation units provide (each compiled with AVX-512 F/BW/VL/DQ +
// VNNI + BF16 flags only). The ISA-free lookups reach them only after isa_supported(Isa::kAvx512);
// the amx level reuses all of them but its prefill GEMMs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/elementwise.hpp"
#include "kernels/float_products.hpp"
#include "kernels/matmul_table.hpp"
#include "kernels/paged_attention.hpp"

namespace kiln::kernels::avx512 {

const MatmulTable& matmul_table();                    // matmul_table_avx512.cpp, built on first use
void register_int8_kernels(MatmulTable& table);       // int4 / int8 × int8 activations (VNNI)
void register_int8_gemm_kernels(MatmulTable& table);  // their prefill GEMMs, called by the above
void register_float_kernels(MatmulTable& table);      // every scheme × f32 activations
void quantize_activations(const float* x, const QuantizedActivations& q, std::size_t row_begin, std::size_t row_end);

AttentionKernels attention_kernels();            // attention_avx512.cpp (decode and prefill)
ElementwiseKernels elementwise_kernels();        // elementwise_avx512.cpp
void accumulate_product(const FloatProduct& p);  // float_products_avx512.cpp
// stripe_hash_avx512.cpp: one zmm register per 64-byte stripe (StripeAccumulateFn).
void accumulate_stripes(std::uint64_t* lanes, const std::uint8_t* p, std::size_t stripes, std::size_t index);

}  // namespace kiln::kernels::avx512
