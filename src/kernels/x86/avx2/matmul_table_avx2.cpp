// The avx2 dispatch table, built on first use, which find_matmul_kernels only reaches after
// isa_supported(Isa::kAvx2).
#include "kernels/x86/avx2/matmul_avx2.hpp"

namespace kiln::kernels {

const MatmulTable& avx2_matmul_table() {
  static const MatmulTable table = [] {
    MatmulTable t;
    avx2::register_int8_kernels(t);
    avx2::register_int4_gemm_kernels(t);
    avx2::register_float_kernels(t);
    t.quantize = avx2::quantize_activations;
    return t;
  }();
  return table;
}

}  // namespace kiln::kernels
