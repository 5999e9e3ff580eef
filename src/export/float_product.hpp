// The operands of one float product C += A·B (float_products.hpp); a plain struct with no
// dependencies, so the ISA-specific kernels can include it without the standard library.
#pragma once

#include <cstddef>

namespace kiln::exporter {

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

}  // namespace kiln::exporter
