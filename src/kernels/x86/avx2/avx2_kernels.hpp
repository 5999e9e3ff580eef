// Internal: what the AVX2 translation units provide (each compiled with AVX2 + FMA flags only).
// The ISA-free lookups (find_matmul_kernels, find_attention_kernels, find_elementwise_kernels,
// accumulate_product, find_stripe_accumulate) reach them only after isa_supported(Isa::kAvx2).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/elementwise.hpp"
#include "kernels/float_products.hpp"
#include "kernels/matmul_table.hpp"
#include "kernels/paged_attention.hpp"

namespace kiln::kernels::avx2 {

const MatmulTable& matmul_table();                    // matmul_table_avx2.cpp, built on first use
void register_int8_kernels(MatmulTable& table);       // int4 / int8 gemvs and the int8 gemms (maddubs)
void register_int4_gemm_kernels(MatmulTable& table);  // the int4 gemms
void register_float_kernels(MatmulTable& table);      // every scheme × f32 activations
void quantize_activations(const float* x, const QuantizedActivations& q, std::size_t row_begin, std::size_t row_end);

AttentionKernels attention_kernels();                            // attention_avx2.cpp
void attend_rows(const PagedKv& kv, const AttentionRows& rows);  // attention_rows_avx2.cpp
ElementwiseKernels elementwise_kernels();                        // elementwise_avx2.cpp
void accumulate_product(const FloatProduct& p);                  // float_products_avx2.cpp
// stripe_hash_avx2.cpp: two ymm registers per 64-byte stripe (StripeAccumulateFn).
void accumulate_stripes(std::uint64_t* lanes, const std::uint8_t* p, std::size_t stripes, std::size_t index);

}  // namespace kiln::kernels::avx2
