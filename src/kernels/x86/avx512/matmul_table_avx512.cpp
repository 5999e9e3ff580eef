// The avx512 dispatch table, built on first use, which find_matmul_kernels only reaches after
// isa_supported(Isa::kAvx512) (building it may execute AVX-512 instructions).
#include "kernels/x86/avx512/matmul_avx512.hpp"

namespace kiln::kernels {

const MatmulTable& avx512_matmul_table() {
  static const MatmulTable table = [] {
    MatmulTable t;
    avx512::register_int8_kernels(t);
    avx512::register_float_kernels(t);
    t.quantize = avx512::quantize_activations;
    return t;
  }();
  return table;
}

}  // namespace kiln::kernels
