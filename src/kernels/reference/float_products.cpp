#include "kernels/reference/float_products.hpp"

namespace kiln::kernels::reference {

void accumulate_product(const FloatProduct& p) {
  for (std::size_t i = 0; i < p.m; ++i) {
    float* c = p.c + i * p.ldc;
    for (std::size_t k = 0; k < p.k; ++k) {
      const float a = p.a[i * p.a_row_stride + k * p.a_k_stride];
      const float* b = p.b + k * p.ldb;
      for (std::size_t j = 0; j < p.n; ++j) c[j] += a * b[j];
    }
  }
}

}  // namespace kiln::kernels::reference
