// The avx2 dispatch table, built on first use, which find_matmul_kernels only reaches after
// isa_supported(Isa::kAvx2).
#include "kernels/x86/avx2/avx2_kernels.hpp"

namespace kiln::kernels::avx2 {

const MatmulTable& matmul_table() {
  static const MatmulTable table = [] {
    MatmulTable t;
    register_int8_kernels(t);
    register_int4_gemm_kernels(t);
    register_float_kernels(t);
    t.quantize = quantize_activations;
    return t;
  }();
  return table;
}

}  // namespace kiln::kernels::avx2
