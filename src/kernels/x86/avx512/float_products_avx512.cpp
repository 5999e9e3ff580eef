// AVX-512 C += A·B: tiles of 8 C rows × 32 columns in 16 accumulators, k in blocks of kBlockK so
// a 32-column strip of B stays in L2; masked loads and stores cover any n, a shorter tile any m.
// Each C element is one FMA chain in k order (the scalar twin's order, fused).
#include "kernels/x86/avx512/avx512_kernels.hpp"

#include <immintrin.h>

namespace kiln::kernels::avx512 {
namespace {

constexpr unsigned long kBlockK = 512;
constexpr unsigned long kTileColumns = 32;

__mmask16 lane_mask(unsigned long columns) {
  return columns >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << columns) - 1u);
}

// C[i0 .. i0+R, j0 .. j0+32) += Σ_{k in [k0, k1)} A(i, k) B[k, j], columns masked by m0, m1.
// Operands are copied to locals and the accumulators kept in two arrays of R so GCC holds them
// in registers (one array of [R][2] was spilled to the stack on every k step).
template <int R>
void tile(const FloatProduct& p, unsigned long i0, unsigned long j0, unsigned long k0, unsigned long k1, __mmask16 m0,
          __mmask16 m1) {
  const unsigned long a_row = p.a_row_stride, a_k = p.a_k_stride, ldb = p.ldb, ldc = p.ldc;
  float* const c = p.c + i0 * ldc + j0;
  __m512 lo[R], hi[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    lo[r] = _mm512_maskz_loadu_ps(m0, c + r * ldc);
    hi[r] = _mm512_maskz_loadu_ps(m1, c + r * ldc + 16);
  }
  const float* a = p.a + i0 * a_row + k0 * a_k;
  const float* b = p.b + k0 * ldb + j0;
  for (unsigned long k = k0; k < k1; ++k, a += a_k, b += ldb) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, b);
    const __m512 b1 = _mm512_maskz_loadu_ps(m1, b + 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * a_row]);
      lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, m0, lo[r]);
    _mm512_mask_storeu_ps(c + r * ldc + 16, m1, hi[r]);
  }
}

void short_tile(const FloatProduct& p, unsigned long rows, unsigned long i0, unsigned long j0, unsigned long k0,
                unsigned long k1, __mmask16 m0, __mmask16 m1) {
  switch (rows) {
    case 1: tile<1>(p, i0, j0, k0, k1, m0, m1); break;
    case 2: tile<2>(p, i0, j0, k0, k1, m0, m1); break;
    case 3: tile<3>(p, i0, j0, k0, k1, m0, m1); break;
    case 4: tile<4>(p, i0, j0, k0, k1, m0, m1); break;
    case 5: tile<5>(p, i0, j0, k0, k1, m0, m1); break;
    case 6: tile<6>(p, i0, j0, k0, k1, m0, m1); break;
    default: tile<7>(p, i0, j0, k0, k1, m0, m1); break;
  }
}

}  // namespace

void accumulate_product(const FloatProduct& p) {
  for (unsigned long k0 = 0; k0 < p.k; k0 += kBlockK) {
    const unsigned long k1 = p.k - k0 < kBlockK ? p.k : k0 + kBlockK;
    for (unsigned long j0 = 0; j0 < p.n; j0 += kTileColumns) {
      const unsigned long columns = p.n - j0;
      const __mmask16 m0 = lane_mask(columns);
      const __mmask16 m1 = columns > 16 ? lane_mask(columns - 16) : static_cast<__mmask16>(0);
      unsigned long i0 = 0;
      for (; i0 + 8 <= p.m; i0 += 8) tile<8>(p, i0, j0, k0, k1, m0, m1);
      if (i0 < p.m) short_tile(p, p.m - i0, i0, j0, k0, k1, m0, m1);
    }
  }
}

}  // namespace kiln::kernels::avx512
