// AVX2 prefill attention (attend_rows), the AVX-512 kernel's scheme on 8-lane vectors: a chunk
// of 16 positions is decoded once (keys transposed so the positions are the lanes, values as
// rows) and serves every query of a block of rows, so a query's 16 scores are head_dim FMAs with
// no horizontal sum per score, and its softmax is one vector update per chunk. No std:: here (an
// ISA translation unit must not emit weak symbols; see src/kernels/CMakeLists.txt).
#include <immintrin.h>

#include "kernels/x86/attend_rows_walk.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx2/kv_rows_avx2.hpp"
#include "kernels/x86/avx2/vector_math_avx2.hpp"

namespace kiln::kernels {
namespace {

namespace vm = avx2_math;
using namespace avx2_kv;  // row addresses and decoding loads

constexpr long kPositionsPerPass = 16;

struct RowChunk {
  alignas(32) float kt[kMaxAttentionRowsHeadDim][kPositionsPerPass];  // [head_dim, 16] keys transposed
  alignas(32) float vf[kPositionsPerPass][kMaxAttentionRowsHeadDim];  // [16, head_dim] values, zero-padded
};

// r[i] (8 positions × 8 elements) becomes r[i] = element i of the 8 positions.
inline void transpose8(__m256 (&r)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Positions [p0, p0 + count) into c; positions past count are zero keys and values.
template <ElementType E>
void decode_chunk(const PagedKv& kv, const AttentionQuery& q, long p0, long count, RowChunk& c) {
  const long hd = kv.head_dim, row_bytes = hd * bytes_per_element(E);
  RowAddress rows[kPositionsPerPass];
  for (long j = 0; j < count; ++j) rows[j] = row_address(kv, q, p0 + j, row_bytes);
  for (long half = 0; half < kPositionsPerPass; half += 8) {
    for (long i = 0; i < hd; i += 8) {
      __m256 k[8];
      for (long j = 0; j < 8; ++j) {
        const long p = half + j;
        const bool live = p < count;
        k[j] = live ? load8<E>(rows[p].keys, i, hd - i, rows[p].key_params, kv.group_size) : _mm256_setzero_ps();
        _mm256_storeu_ps(c.vf[p] + i, live ? load8<E>(rows[p].values, i, hd - i, rows[p].value_params, kv.group_size)
                                           : _mm256_setzero_ps());
      }
      transpose8(k);
      const long dims = hd - i < 8 ? hd - i : 8;
      for (long d = 0; d < dims; ++d) _mm256_store_ps(c.kt[i + d] + half, k[d]);
    }
  }
}

// One query over the chunk's first `valid` positions: folds them into its softmax state and acc.
inline void attend_chunk(const RowChunk& c, const float* qv, long hd, long valid, float scale, float& max, float& sum,
                         float* acc) {
  __m256 lo[4], hi[4];  // scores of positions 0-7 and 8-15, four chains each over head_dim
  for (int s = 0; s < 4; ++s) lo[s] = hi[s] = _mm256_setzero_ps();
  long d = 0;
  for (; d + 4 <= hd; d += 4) {
#pragma GCC unroll 4
    for (int s = 0; s < 4; ++s) {
      const __m256 qd = _mm256_broadcast_ss(qv + d + s);
      lo[s] = _mm256_fmadd_ps(qd, _mm256_load_ps(c.kt[d + s]), lo[s]);
      hi[s] = _mm256_fmadd_ps(qd, _mm256_load_ps(c.kt[d + s] + 8), hi[s]);
    }
  }
  for (; d < hd; ++d) {
    const __m256 qd = _mm256_broadcast_ss(qv + d);
    lo[0] = _mm256_fmadd_ps(qd, _mm256_load_ps(c.kt[d]), lo[0]);
    hi[0] = _mm256_fmadd_ps(qd, _mm256_load_ps(c.kt[d] + 8), hi[0]);
  }
  const __m256 scale8 = _mm256_set1_ps(scale), minus_inf = _mm256_set1_ps(-__builtin_inff());
  const __m256 live_lo = _mm256_castsi256_ps(vm::first_lanes(valid));
  const __m256 live_hi = _mm256_castsi256_ps(vm::first_lanes(valid - 8));
  const __m256 s_lo = _mm256_blendv_ps(
      minus_inf, _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(lo[0], lo[1]), _mm256_add_ps(lo[2], lo[3])), scale8),
      live_lo);
  const __m256 s_hi = _mm256_blendv_ps(
      minus_inf, _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(hi[0], hi[1]), _mm256_add_ps(hi[2], hi[3])), scale8),
      live_hi);
  const float chunk_max = vm::reduce_max(_mm256_max_ps(s_lo, s_hi));
  const float new_max = chunk_max > max ? chunk_max : max;
  const __m256 shift = _mm256_set1_ps(new_max);
  const __m256 e_lo = _mm256_and_ps(vm::exp(_mm256_sub_ps(s_lo, shift)), live_lo);
  const __m256 e_hi = _mm256_and_ps(vm::exp(_mm256_sub_ps(s_hi, shift)), live_hi);
  alignas(32) float weights[kPositionsPerPass];
  _mm256_store_ps(weights, e_lo);
  _mm256_store_ps(weights + 8, e_hi);
  const __m256 correction = vm::exp(_mm256_set1_ps(max - new_max));  // max = -inf at first: 0
  sum = sum * _mm256_cvtss_f32(correction) + vm::reduce_add(_mm256_add_ps(e_lo, e_hi));
  max = new_max;
  long i = 0;
  for (; i + 32 <= hd; i += 32) {  // four independent chains over the positions
    __m256 a[4];
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b) a[b] = _mm256_mul_ps(_mm256_loadu_ps(acc + i + 8 * b), correction);
    for (long j = 0; j < valid; ++j) {
      const __m256 w = _mm256_broadcast_ss(weights + j);
#pragma GCC unroll 4
      for (int b = 0; b < 4; ++b) a[b] = _mm256_fmadd_ps(w, _mm256_loadu_ps(c.vf[j] + i + 8 * b), a[b]);
    }
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b) _mm256_storeu_ps(acc + i + 8 * b, a[b]);
  }
  for (; i < hd; i += 8) {
    __m256 a = _mm256_mul_ps(load_floats(acc + i, hd - i), correction);
    for (long j = 0; j < valid; ++j)
      a = _mm256_fmadd_ps(_mm256_broadcast_ss(weights + j), _mm256_loadu_ps(c.vf[j] + i), a);
    store_floats(acc + i, hd - i, a);
  }
}

template <ElementType E>
void attend_rows_as(const PagedKv& kv, const AttentionRows& a) {
  rows_walk::attend_rows_walk<RowChunk, kPositionsPerPass>(
      kv, a,
      [&](const AttentionQuery& where, long p0, long count, RowChunk& c) { decode_chunk<E>(kv, where, p0, count, c); },
      [](auto&&... args) { attend_chunk(args...); },
      [](float* acc, long hd, float inverse_sum) {
        const __m256 inverse = _mm256_set1_ps(inverse_sum);
        for (long i = 0; i < hd; i += 8)
          store_floats(acc + i, hd - i, _mm256_mul_ps(load_floats(acc + i, hd - i), inverse));
      });
}

}  // namespace

void avx2::attend_rows(const PagedKv& kv, const AttentionRows& a) {
  switch (kv.element) {
    case ElementType::kF32: attend_rows_as<ElementType::kF32>(kv, a); break;
    case ElementType::kF16: attend_rows_as<ElementType::kF16>(kv, a); break;
    case ElementType::kBf16: attend_rows_as<ElementType::kBf16>(kv, a); break;
    case ElementType::kU8: attend_rows_as<ElementType::kU8>(kv, a); break;
    default: break;  // not a KV precision: PagedKv never holds one
  }
}

}  // namespace kiln::kernels
