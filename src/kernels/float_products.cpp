#include "kernels/float_products.hpp"

#include "kernels/reference/float_products.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"

namespace kiln::kernels {

void accumulate_product(const FloatProduct& p, Isa isa) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return;
  if (isa >= Isa::kAvx512) {
    avx512::accumulate_product(p);
  } else if (isa >= Isa::kAvx2) {
    avx2::accumulate_product(p);
  } else {
    reference::accumulate_product(p);
  }
}

}  // namespace kiln::kernels
