// AVX2 paged attention: the same algorithm as the AVX-512 kernel (K/V read once per GQA group,
// scores for 16 positions, one online-softmax update per head per 16 positions) on 8-lane
// vectors; a row's tail of fewer than 8 elements goes through a zero-padded copy. No std::
// here (an ISA translation unit must not emit weak symbols; see src/kernels/CMakeLists.txt).
#include <immintrin.h>

#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx2/kv_rows_avx2.hpp"
#include "kernels/x86/avx2/vector_math_avx2.hpp"

namespace kiln::kernels {
namespace {

namespace vm = avx2_math;
using namespace avx2_kv;  // row addresses and decoding loads

using kv_rows::kMaxHeadsPerPass;
using kv_rows::with_head_count;
constexpr long kPositionsPerPass = 16;

// Scores of positions j0 .. j0 + J for H heads: J·H dot products advance together (one
// chain per position and head, in head_dim order), enough independent FMAs to hide the latency.
template <ElementType E, int H, int J>
inline void score_block(const PagedKv& kv, const AttentionQuery& q, const float* qh, long p0, long j0,
                        float (*scores)[kPositionsPerPass]) {
  const long hd = kv.head_dim;
  RowAddress r[J];
  __m256 dot[J][H];
#pragma GCC unroll 8
  for (int j = 0; j < J; ++j) {
    r[j] = row_address(kv, q, p0 + j0 + j, hd * bytes_per_element(E));
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h) dot[j][h] = _mm256_setzero_ps();
  }
  for (long i = 0; i < hd; i += 8) {
#pragma GCC unroll 8
    for (int j = 0; j < J; ++j) {
      const __m256 k = load8<E>(r[j].keys, i, hd - i, r[j].key_params, kv.group_size);
#pragma GCC unroll 8
      for (int h = 0; h < H; ++h) dot[j][h] = _mm256_fmadd_ps(load_floats(qh + h * hd + i, hd - i), k, dot[j][h]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < J; ++j) {
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h) scores[h][j0 + j] = vm::reduce_add(dot[j][h]) * q.scale;
  }
}

template <ElementType E, int H>
void score_positions_of(const PagedKv& kv, const AttentionQuery& q, const float* qh, long p0, long count,
                        float (*scores)[kPositionsPerPass]) {
  constexpr int kJ = H >= 8 ? 1 : 8 / H;  // about 8 chains in flight
  long j = 0;
  for (; j + kJ <= count; j += kJ) score_block<E, H, kJ>(kv, q, qh, p0, j, scores);
  for (; j < count; ++j) score_block<E, H, 1>(kv, q, qh, p0, j, scores);
}

inline void update_softmax(float* scores, long count, float& max, float& sum, float* acc, long hd) {
  float chunk_max = -__builtin_inff();
  for (long j = 0; j < count; ++j) chunk_max = scores[j] > chunk_max ? scores[j] : chunk_max;
  const float new_max = chunk_max > max ? chunk_max : max;
  __m256 total = _mm256_setzero_ps();
  for (long j = 0; j < count; j += 8) {
    const __m256 e = vm::exp(_mm256_sub_ps(load_floats(scores + j, count - j), _mm256_set1_ps(new_max)));
    const __m256 kept = _mm256_and_ps(e, _mm256_castsi256_ps(vm::first_lanes(count - j)));
    store_floats(scores + j, count - j, kept);
    total = _mm256_add_ps(total, kept);
  }
  const __m256 correction = vm::exp(_mm256_set1_ps(max - new_max));
  const float c = _mm256_cvtss_f32(correction);
  sum = sum * c + vm::reduce_add(total);
  max = new_max;
  if (c != 1.0f) {
    for (long i = 0; i < hd; i += 8)
      store_floats(acc + i, hd - i, _mm256_mul_ps(load_floats(acc + i, hd - i), correction));
  }
}

// acc[h] += Σ_j weights[h][j] · V[p0 + j] in j order, for H heads and B 8-lane slices from
// column i. The B·H accumulators stay in registers over the chunk's positions: updating acc in
// memory per position made every FMA wait for the previous one's store.
template <ElementType E, int H, int B>
inline void accumulate_slices(const PagedKv& kv, const RowAddress* rows, long count,
                              float (*weights)[kPositionsPerPass], float* acc, long i) {
  const long hd = kv.head_dim;
  __m256 a[B][H];
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h) a[b][h] = load_floats(acc + h * hd + i + 8 * b, hd - i - 8 * b);
  }
  for (long j = 0; j < count; ++j) {
#pragma GCC unroll 8
    for (int b = 0; b < B; ++b) {
      const __m256 v = load8<E>(rows[j].values, i + 8 * b, hd - i - 8 * b, rows[j].value_params, kv.group_size);
#pragma GCC unroll 8
      for (int h = 0; h < H; ++h) a[b][h] = _mm256_fmadd_ps(_mm256_set1_ps(weights[h][j]), v, a[b][h]);
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h) store_floats(acc + h * hd + i + 8 * b, hd - i - 8 * b, a[b][h]);
  }
}

template <ElementType E, int H>
void accumulate_values_of(const PagedKv& kv, const RowAddress* rows, long count, float (*weights)[kPositionsPerPass],
                          float* acc) {
  constexpr int kB = H >= 8 ? 1 : 8 / H;  // about 8 chains in flight
  long i = 0;
  for (; i + 8 * kB <= kv.head_dim; i += 8 * kB) accumulate_slices<E, H, kB>(kv, rows, count, weights, acc, i);
  for (; i < kv.head_dim; i += 8) accumulate_slices<E, H, 1>(kv, rows, count, weights, acc, i);
}

template <ElementType E>
void score_positions(const PagedKv& kv, const AttentionQuery& q, const float* qh, long heads, long p0, long count,
                     float (*scores)[kPositionsPerPass]) {
  with_head_count(heads, [&](auto h) { score_positions_of<E, decltype(h)::value>(kv, q, qh, p0, count, scores); });
}

template <ElementType E>
void accumulate_values(const PagedKv& kv, const AttentionQuery& q, long heads, long p0, long count,
                       float (*weights)[kPositionsPerPass], float* acc) {
  RowAddress rows[kPositionsPerPass];
  for (long j = 0; j < count; ++j) rows[j] = row_address(kv, q, p0 + j, kv.head_dim * bytes_per_element(E));
  with_head_count(heads, [&](auto h) { accumulate_values_of<E, decltype(h)::value>(kv, rows, count, weights, acc); });
}

template <ElementType E>
void attend_heads(const PagedKv& kv, const AttentionQuery& q, long h0, long heads, const AttentionPartial& out) {
  const long hd = kv.head_dim;
  const float* qh = q.q + h0 * hd;  // [heads, head_dim]
  float* acc = out.acc + h0 * hd;   // [heads, head_dim]
  float max[kMaxHeadsPerPass], sum[kMaxHeadsPerPass];
  float scores[kMaxHeadsPerPass][kPositionsPerPass];
  for (long h = 0; h < heads; ++h) {
    max[h] = -__builtin_inff();
    sum[h] = 0.0f;
    for (long i = 0; i < hd; ++i) acc[h * hd + i] = 0.0f;
  }
  for (long p0 = q.begin; p0 < q.end; p0 += kPositionsPerPass) {
    const long count = q.end - p0 < kPositionsPerPass ? q.end - p0 : kPositionsPerPass;
    score_positions<E>(kv, q, qh, heads, p0, count, scores);
    for (long h = 0; h < heads; ++h) update_softmax(scores[h], count, max[h], sum[h], acc + h * hd, hd);
    accumulate_values<E>(kv, q, heads, p0, count, scores, acc);
  }
  for (long h = 0; h < heads; ++h) {
    out.max[h0 + h] = max[h];
    out.sum[h0 + h] = sum[h];
  }
}

template <ElementType E>
void attend_all(const PagedKv& kv, const AttentionQuery& q, const AttentionPartial& out) {
  for (long h0 = 0; h0 < q.num_heads; h0 += kMaxHeadsPerPass) {
    attend_heads<E>(kv, q, h0, q.num_heads - h0 < kMaxHeadsPerPass ? q.num_heads - h0 : kMaxHeadsPerPass, out);
  }
}

void attend(const PagedKv& kv, const AttentionQuery& q, const AttentionPartial& out) {
  switch (kv.element) {
    case ElementType::kF32: attend_all<ElementType::kF32>(kv, q, out); break;
    case ElementType::kF16: attend_all<ElementType::kF16>(kv, q, out); break;
    case ElementType::kBf16: attend_all<ElementType::kBf16>(kv, q, out); break;
    case ElementType::kU8: attend_all<ElementType::kU8>(kv, q, out); break;
    default: break;  // not a KV precision: PagedKv never holds one
  }
}

// 8 lanes of 16-bit values (in the low half of each 32-bit lane) stored as 16 bytes.
inline void store_u16(std::uint8_t* dst, long left, __m256i lanes) {
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lanes, lanes), 0x08);
  alignas(16) std::uint8_t bytes[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(bytes), _mm256_castsi256_si128(packed));
  for (long b = 0; b < (left < 8 ? left : 8) * 2; ++b) dst[b] = bytes[b];
}

// f32 → bf16 bits, round to nearest even, NaN kept quiet: the same bits as util/half.hpp.
inline __m256i to_bf16(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));  // abs < 2^31: signed compare is exact
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

void encode_u8_group(const float* x, long count, std::uint8_t* dst, float* params) {
  float min = x[0], max = x[0];
  for (long i = 0; i < count; ++i) {
    min = x[i] < min ? x[i] : min;
    max = x[i] > max ? x[i] : max;
  }
  const float scale = (max - min) / 255.0f;
  const __m256 inverse = _mm256_set1_ps(scale > 0.0f ? 1.0f / scale : 0.0f);
  for (long i = 0; i < count; i += 8) {
    __m256 code = _mm256_mul_ps(_mm256_sub_ps(load_floats(x + i, count - i), _mm256_set1_ps(min)), inverse);
    code = _mm256_round_ps(code, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    code = _mm256_min_ps(_mm256_max_ps(code, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
    alignas(32) int codes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(codes), _mm256_cvtps_epi32(code));
    for (long j = 0; j < 8 && i + j < count; ++j) dst[i + j] = static_cast<std::uint8_t>(codes[j]);
  }
  params[0] = scale;
  params[1] = min;
}

void encode(const float* x, std::size_t n, ElementType element, std::size_t group_size, std::uint8_t* dst,
            float* params) {
  const long count = static_cast<long>(n);
  if (element == ElementType::kU8) {
    for (long g0 = 0, g = 0; g0 < count; g0 += static_cast<long>(group_size), ++g) {
      const long size = count - g0 < static_cast<long>(group_size) ? count - g0 : static_cast<long>(group_size);
      encode_u8_group(x + g0, size, dst + g0, params + 2 * g);
    }
    return;
  }
  for (long i = 0; i < count; i += 8) {
    const __m256 v = load_floats(x + i, count - i);
    switch (element) {
      case ElementType::kF32: store_floats(reinterpret_cast<float*>(dst) + i, count - i, v); break;
      case ElementType::kF16:
        store_u16(dst + i * 2, count - i,
                  _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
        break;
      case ElementType::kBf16: store_u16(dst + i * 2, count - i, to_bf16(v)); break;
      case ElementType::kU8: break;
      default: break;  // not a KV precision: PagedKv never holds one
    }
  }
}

}  // namespace

namespace avx2 {
AttentionKernels attention_kernels() { return {attend, encode, attend_rows}; }
}  // namespace avx2

}  // namespace kiln::kernels
