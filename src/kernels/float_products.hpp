// The float products the export's statistics and searches are made of: C += A·B over a row
// panel, with A read through strides so one kernel forms Xᵀ X (an input's Hessian, A = Xᵀ read
// from X's rows) and D·H or D·Xᵀ (AWQ's output error, A = D). AVX2 and AVX-512 kernels and a
// scalar twin (reference/float_products.hpp); each C element is summed over k in order: the
// kernels agree bit for bit (one FMA chain each) and differ from the twin only by fused rounding.
#pragma once

#include <cstddef>

#include "kernels/cpu_isa.hpp"

namespace kiln::kernels {

// The operands of one product C += A·B: a plain struct, so the ISA units include it without the
// standard library.
struct FloatProduct {
  const float* a = nullptr;  // A(i, k) = a[i * a_row_stride + k * a_k_stride]
  std::size_t a_row_stride = 0;
  std::size_t a_k_stride = 0;
  const float* b = nullptr;  // B [k, n], rows ldb apart
  std::size_t ldb = 0;
  float* c = nullptr;  // C [m, n], rows ldc apart: accumulated into
  std::size_t ldc = 0;
  std::size_t m = 0, n = 0, k = 0;
};

// C += A·B on this thread with the best kernel `isa` allows (kAvx2: AVX2 + FMA, kAvx512 and
// above: AVX-512, kScalar: the twin). `isa` must be supported by this CPU.
void accumulate_product(const FloatProduct& p, Isa isa);

}  // namespace kiln::kernels
