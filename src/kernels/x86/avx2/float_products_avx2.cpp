// AVX2 C += A·B: tiles of 6 C rows × 16 columns in 12 ymm accumulators (with the two B vectors
// and one broadcast, 15 of the 16 registers), k in blocks of kBlockK so a strip of B stays in L2;
// masked loads and stores cover a ragged last strip. Each C element is one FMA chain in k order,
// so the results are the AVX-512 kernel's, bit for bit.
#include "kernels/x86/avx2/avx2_kernels.hpp"

#include <immintrin.h>

namespace kiln::kernels::avx2 {
namespace {

constexpr unsigned long kBlockK = 512;
constexpr unsigned long kTileColumns = 16;
constexpr int kTileRows = 6;

// Lanes [0, columns) of 8 enabled, as vmaskmov's sign-bit mask.
__m256i lane_mask(unsigned long columns) {
  const int n = columns >= 8 ? 8 : static_cast<int>(columns);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

// C[i0 .. i0+R, j0 .. j0+16) += Σ_{k in [k0, k1)} A(i, k) B[k, j]. Masked: the strip is ragged.
template <int R, bool Masked>
void tile(const FloatProduct& p, unsigned long i0, unsigned long j0, unsigned long k0, unsigned long k1, __m256i m0,
          __m256i m1) {
  const unsigned long a_row = p.a_row_stride, a_k = p.a_k_stride, ldb = p.ldb, ldc = p.ldc;
  float* const c = p.c + i0 * ldc + j0;
  __m256 lo[R], hi[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    lo[r] = Masked ? _mm256_maskload_ps(c + r * ldc, m0) : _mm256_loadu_ps(c + r * ldc);
    hi[r] = Masked ? _mm256_maskload_ps(c + r * ldc + 8, m1) : _mm256_loadu_ps(c + r * ldc + 8);
  }
  const float* a = p.a + i0 * a_row + k0 * a_k;
  const float* b = p.b + k0 * ldb + j0;
  for (unsigned long k = k0; k < k1; ++k, a += a_k, b += ldb) {
    const __m256 b0 = Masked ? _mm256_maskload_ps(b, m0) : _mm256_loadu_ps(b);
    const __m256 b1 = Masked ? _mm256_maskload_ps(b + 8, m1) : _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * a_row);
      lo[r] = _mm256_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm256_fmadd_ps(av, b1, hi[r]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    if (Masked) {
      _mm256_maskstore_ps(c + r * ldc, m0, lo[r]);
      _mm256_maskstore_ps(c + r * ldc + 8, m1, hi[r]);
    } else {
      _mm256_storeu_ps(c + r * ldc, lo[r]);
      _mm256_storeu_ps(c + r * ldc + 8, hi[r]);
    }
  }
}

template <bool Masked>
void strip(const FloatProduct& p, unsigned long j0, unsigned long k0, unsigned long k1, __m256i m0, __m256i m1) {
  unsigned long i0 = 0;
  for (; i0 + kTileRows <= p.m; i0 += kTileRows) tile<kTileRows, Masked>(p, i0, j0, k0, k1, m0, m1);
  switch (p.m - i0) {
    case 1: tile<1, Masked>(p, i0, j0, k0, k1, m0, m1); break;
    case 2: tile<2, Masked>(p, i0, j0, k0, k1, m0, m1); break;
    case 3: tile<3, Masked>(p, i0, j0, k0, k1, m0, m1); break;
    case 4: tile<4, Masked>(p, i0, j0, k0, k1, m0, m1); break;
    case 5: tile<5, Masked>(p, i0, j0, k0, k1, m0, m1); break;
    default: break;
  }
}

}  // namespace

void accumulate_product(const FloatProduct& p) {
  for (unsigned long k0 = 0; k0 < p.k; k0 += kBlockK) {
    const unsigned long k1 = p.k - k0 < kBlockK ? p.k : k0 + kBlockK;
    for (unsigned long j0 = 0; j0 < p.n; j0 += kTileColumns) {
      const unsigned long columns = p.n - j0;
      if (columns >= kTileColumns) {
        strip<false>(p, j0, k0, k1, __m256i{}, __m256i{});
      } else {
        strip<true>(p, j0, k0, k1, lane_mask(columns), lane_mask(columns > 8 ? columns - 8 : 0));
      }
    }
  }
}

}  // namespace kiln::kernels::avx2
