// The avx512 dispatch table, built on first use, which find_matmul_kernels only reaches after
// isa_supported(Isa::kAvx512) (building it may execute AVX-512 instructions).
#include "kernels/x86/avx512/avx512_kernels.hpp"

namespace kiln::kernels::avx512 {

const MatmulTable& matmul_table() {
  static const MatmulTable table = [] {
    MatmulTable t;
    register_int8_kernels(t);
    register_float_kernels(t);
    t.quantize = quantize_activations;
    return t;
  }();
  return table;
}

}  // namespace kiln::kernels::avx512
