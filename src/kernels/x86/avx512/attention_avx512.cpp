// AVX-512 paged attention. Decode (attend): the GQA group's heads go in passes whose head count
// is a template argument, so every accumulator lives in a register. Per chunk of 16 positions
// the K rows are decoded 16 lanes at a time and dotted with every head of the pass (K and V are
// read once per group, not per head), a few positions' dot vectors at a time summed in one
// transposing tree; then one online-softmax update per head and one pass over the V rows. The
// next chunk's rows are looked up and prefetched while one is computed. Prefill (attend_rows)
// decodes each 16-position chunk once for many query rows. No std:: here: this translation unit
// is compiled with AVX-512 flags and must not emit weak symbols that baseline code could bind to
// (see src/kernels/CMakeLists.txt).
#include <immintrin.h>

#include "kernels/x86/attend_rows_walk.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "kernels/x86/avx512/vector_math_avx512.hpp"
#include "kernels/x86/kv_row_address.hpp"

namespace kiln::kernels {
namespace {

namespace vm = avx512_math;

using kv_rows::kMaxHeadsPerPass;
using kv_rows::with_head_count;
constexpr long kPositionsPerPass = 16;

using kv_rows::bytes_per_element;
using kv_rows::row_address;
using kv_rows::RowAddress;

// 16 elements of a stored row from element i on, as f32; lanes outside `m` are zero codes.
template <ElementType E>
inline __m512 load16(const std::uint8_t* row, long i, __mmask16 m, const float* params, long group_size) {
  if constexpr (E == ElementType::kF32) {
    return _mm512_maskz_loadu_ps(m, row + i * 4);
  } else if constexpr (E == ElementType::kF16) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + i * 2));
  } else if constexpr (E == ElementType::kBf16) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, row + i * 2));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  } else {
    // A 16-lane chunk never straddles groups: group sizes are multiples of 16 (or the row).
    const float* p = params + (i / group_size) * 2;
    const __m512 codes = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, row + i)));
    return _mm512_fmadd_ps(codes, _mm512_set1_ps(p[0]), _mm512_set1_ps(p[1]));
  }
}

// Lane j of the result is the sum of v[j]'s lanes: 16 horizontal sums in 45 shuffles and adds
// (pairs, then quads within 128-bit lanes, then across them) instead of 16 reductions of 8.
// Always inlined, like update_softmax: out of line, GCC 12 warns that its own intrinsics' headers
// read an uninitialised vector.
[[gnu::always_inline]] inline __m512 sum_each(const __m512 (&v)[kPositionsPerPass]) {
  __m512 pairs[8], quads[4];
  for (int i = 0; i < 8; ++i) {
    pairs[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(pairs[2 * i]), b = _mm512_castps_pd(pairs[2 * i + 1]);
    quads[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  // quads[m] holds, in each 128-bit lane, that lane's partial sums of v[4m .. 4m + 3].
  const __m512 low =
      _mm512_add_ps(_mm512_shuffle_f32x4(quads[0], quads[1], 0x44), _mm512_shuffle_f32x4(quads[0], quads[1], 0xEE));
  const __m512 high =
      _mm512_add_ps(_mm512_shuffle_f32x4(quads[2], quads[3], 0x44), _mm512_shuffle_f32x4(quads[2], quads[3], 0xEE));
  return _mm512_add_ps(_mm512_shuffle_f32x4(low, high, 0x88), _mm512_shuffle_f32x4(low, high, 0xDD));
}

// The K/V rows of positions [p0, p0 + count) (count <= 16) with one block-table lookup per block
// rather than a division per position, and each block's run of rows asked for (the blocks lie
// anywhere in the pool, where the hardware prefetcher finds them only after the first misses).
// The rows past count repeat the last one, so a chunk's score loop needs no bounds (their
// scores are masked off). NOTE: the prefetches stay here, beside the address arithmetic: GCC 12
// dropped them from a separate loop over the finished rows.
inline void chunk_rows(const PagedKv& kv, const AttentionQuery& q, long p0, long count, long row_bytes,
                       RowAddress (&rows)[kPositionsPerPass]) {
  long j = 0;
  while (j < count) {
    const RowAddress first = row_address(kv, q, p0 + j, row_bytes);
    const long in_block = kv.block_size - (p0 + j) % kv.block_size;
    const long run = in_block < count - j ? in_block : count - j;  // positions left in this block
    for (long b = 0; b < run * row_bytes; b += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(first.keys + b), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(first.values + b), _MM_HINT_T1);
    }
    for (long b = 0; first.key_params && b < run * kv.groups * 8; b += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(first.key_params) + b, _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(first.value_params) + b, _MM_HINT_T1);
    }
    for (long r = 0; r < run; ++r, ++j) {
      rows[j] = RowAddress{first.keys + r * row_bytes, first.values + r * row_bytes,
                           first.key_params ? first.key_params + r * kv.groups * 2 : nullptr,
                           first.value_params ? first.value_params + r * kv.groups * 2 : nullptr};
    }
  }
  for (; j < kPositionsPerPass; ++j) rows[j] = rows[count - 1];
}

// scores[h] lane j = scale · q_h · k_j for the chunk's 16 rows. kSub positions at a time keep
// every head's dot vector of them in registers (kHeads · kSub <= 16), ordered head-major so one
// transposing sum leaves each head's kSub dot products side by side; a masked permute moves
// them into the head's score vector.
template <ElementType E, long kHeads>
void score_chunk(const PagedKv& kv, const float* qh, const RowAddress (&rows)[kPositionsPerPass], float scale,
                 __m512 (&scores)[kHeads]) {
  constexpr long kSub = kPositionsPerPass / kHeads;
  const long hd = kv.head_dim;
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
#pragma GCC unroll 8
  for (long h = 0; h < kHeads; ++h) scores[h] = _mm512_setzero_ps();
  for (long s0 = 0; s0 < kPositionsPerPass; s0 += kSub) {
    __m512 dots[kPositionsPerPass];
#pragma GCC unroll 16
    for (long v = 0; v < kPositionsPerPass; ++v) dots[v] = _mm512_setzero_ps();
    for (long i = 0; i < hd; i += 16) {
      const __mmask16 m = vm::first_lanes(hd - i);
#pragma GCC unroll 16
      for (long j = 0; j < kSub; ++j) {
        const RowAddress& r = rows[s0 + j < kPositionsPerPass ? s0 + j : kPositionsPerPass - 1];
        const __m512 k = load16<E>(r.keys, i, m, r.key_params, kv.group_size);
#pragma GCC unroll 8
        for (long h = 0; h < kHeads; ++h) {
          dots[h * kSub + j] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, qh + h * hd + i), k, dots[h * kSub + j]);
        }
      }
    }
    const __m512 sums = _mm512_mul_ps(sum_each(dots), _mm512_set1_ps(scale));
    // Lanes [s0, s0 + kSub) of head h's scores come from lanes [h * kSub, h * kSub + kSub) of sums.
    const __mmask16 positions = static_cast<__mmask16>(((1u << kSub) - 1u) << s0);
#pragma GCC unroll 8
    for (long h = 0; h < kHeads; ++h) {
      const __m512i from = _mm512_add_epi32(lane, _mm512_set1_epi32(static_cast<int>(h * kSub - s0)));
      scores[h] = _mm512_mask_permutexvar_ps(scores[h], positions, from, sums);
    }
  }
}

// Turns one head's scores (lanes past count ignored) into weights exp(score - new max), stored
// for the value pass, and rescales its running state.
[[gnu::always_inline]] inline void update_softmax(__m512 scores, long count, float* weights, float& max, float& sum,
                                                  float* acc, long hd) {
  const __mmask16 m = vm::first_lanes(count);
  const __m512 s = _mm512_mask_mov_ps(_mm512_set1_ps(-__builtin_inff()), m, scores);
  const float chunk_max = vm::reduce_max(s);
  const float new_max = chunk_max > max ? chunk_max : max;
  const __m512 e = _mm512_maskz_mov_ps(m, vm::exp(_mm512_sub_ps(s, _mm512_set1_ps(new_max))));
  _mm512_store_ps(weights, e);
  const float chunk_sum = vm::reduce_add(e);
  if (new_max == max) {
    sum += chunk_sum;
    return;
  }
  const __m512 correction = vm::exp(_mm512_set1_ps(max - new_max));  // max = -inf at first: 0
  sum = sum * _mm512_cvtss_f32(correction) + chunk_sum;
  max = new_max;
  for (long i = 0; i < hd; i += 16) {
    const __mmask16 lanes = vm::first_lanes(hd - i);
    _mm512_mask_storeu_ps(acc + i, lanes, _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, acc + i), correction));
  }
}

// acc[h] += weights[h][j] · v_j over the chunk's first `count` rows, one 16-lane column of the
// head dimension at a time, every head's accumulator of the column in a register.
template <ElementType E, long kHeads>
void accumulate_values(const PagedKv& kv, const RowAddress (&rows)[kPositionsPerPass], long count,
                       const float (*weights)[kPositionsPerPass], float* acc) {
  const long hd = kv.head_dim;
  for (long i = 0; i < hd; i += 16) {
    const __mmask16 m = vm::first_lanes(hd - i);
    __m512 a[kHeads];
#pragma GCC unroll 8
    for (long h = 0; h < kHeads; ++h) a[h] = _mm512_maskz_loadu_ps(m, acc + h * hd + i);
    for (long j = 0; j < count; ++j) {
      const __m512 v = load16<E>(rows[j].values, i, m, rows[j].value_params, kv.group_size);
#pragma GCC unroll 8
      for (long h = 0; h < kHeads; ++h) a[h] = _mm512_fmadd_ps(_mm512_set1_ps(weights[h][j]), v, a[h]);
    }
#pragma GCC unroll 8
    for (long h = 0; h < kHeads; ++h) _mm512_mask_storeu_ps(acc + h * hd + i, m, a[h]);
  }
}

// Heads [h0, h0 + kHeads) of the query over all its positions.
template <ElementType E, long kHeads>
void attend_heads(const PagedKv& kv, const AttentionQuery& q, long h0, const AttentionPartial& out) {
  const long hd = kv.head_dim;
  const long row_bytes = hd * bytes_per_element(E);
  const float* qh = q.q + h0 * hd;  // [kHeads, head_dim]
  float* acc = out.acc + h0 * hd;   // [kHeads, head_dim]
  float max[kHeads], sum[kHeads];
  alignas(64) float weights[kHeads][kPositionsPerPass];  // the chunk's softmax weights
  for (long h = 0; h < kHeads; ++h) {
    max[h] = -__builtin_inff();
    sum[h] = 0.0f;
    for (long i = 0; i < hd; ++i) acc[h * hd + i] = 0.0f;
  }
  // The next chunk's rows are looked up, and fetched, while this one is computed.
  RowAddress rows[kPositionsPerPass], next[kPositionsPerPass];
  const auto chunk_count = [&](long p0) { return q.end - p0 < kPositionsPerPass ? q.end - p0 : kPositionsPerPass; };
  chunk_rows(kv, q, q.begin, chunk_count(q.begin), row_bytes, next);
  for (long p0 = q.begin; p0 < q.end; p0 += kPositionsPerPass) {
    const long count = chunk_count(p0);
    for (long j = 0; j < kPositionsPerPass; ++j) rows[j] = next[j];
    if (p0 + kPositionsPerPass < q.end) {
      const long after = p0 + kPositionsPerPass;
      chunk_rows(kv, q, after, chunk_count(after), row_bytes, next);
    }
    __m512 scores[kHeads];
    score_chunk<E, kHeads>(kv, qh, rows, q.scale, scores);
    for (long h = 0; h < kHeads; ++h) update_softmax(scores[h], count, weights[h], max[h], sum[h], acc + h * hd, hd);
    accumulate_values<E, kHeads>(kv, rows, count, weights, acc);
  }
  for (long h = 0; h < kHeads; ++h) {
    out.max[h0 + h] = max[h];
    out.sum[h0 + h] = sum[h];
  }
}

// The GQA group in passes of at most kMaxHeadsPerPass heads, each pass's head count a template
// argument so its accumulators stay in registers.
template <ElementType E>
void attend_all(const PagedKv& kv, const AttentionQuery& q, const AttentionPartial& out) {
  for (long h0 = 0; h0 < q.num_heads; h0 += kMaxHeadsPerPass) {
    const long heads = q.num_heads - h0 < kMaxHeadsPerPass ? q.num_heads - h0 : kMaxHeadsPerPass;
    with_head_count(heads, [&](auto h) { attend_heads<E, decltype(h)::value>(kv, q, h0, out); });
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

// Prefill: a chunk of 16 positions is decoded once into kt (keys transposed, [head_dim][16]) and
// vf (values, [16][head_dim]) and then serves every query of the rows. With the positions in the
// lanes, a query's 16 scores are head_dim FMAs and its softmax needs no horizontal sum per score.
struct RowChunk {
  alignas(64) float kt[kMaxAttentionRowsHeadDim][kPositionsPerPass];
  alignas(64) float vf[kPositionsPerPass][kMaxAttentionRowsHeadDim];
};

template <ElementType E>
void decode_chunk(const PagedKv& kv, const AttentionQuery& q, long p0, long count, long row_bytes, RowChunk& c) {
  const long hd = kv.head_dim;
  alignas(64) float keys[kPositionsPerPass][kMaxAttentionRowsHeadDim];  // [position][head_dim]
  for (long j = 0; j < kPositionsPerPass; ++j) {
    const bool live = j < count;
    const RowAddress r = live ? row_address(kv, q, p0 + j, row_bytes) : RowAddress{};
    for (long i = 0; i < hd; i += 16) {
      const __mmask16 m = live ? vm::first_lanes(hd - i) : __mmask16{0};
      _mm512_storeu_ps(keys[j] + i, live ? load16<E>(r.keys, i, m, r.key_params, kv.group_size) : _mm512_setzero_ps());
      _mm512_storeu_ps(c.vf[j] + i,
                       live ? load16<E>(r.values, i, m, r.value_params, kv.group_size) : _mm512_setzero_ps());
    }
  }
  const __m512i rows = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                          _mm512_set1_epi32(kMaxAttentionRowsHeadDim));
  for (long d = 0; d < hd; ++d) _mm512_store_ps(c.kt[d], _mm512_i32gather_ps(rows, keys[0] + d, 4));
}

// One query over the chunk's first `valid` positions: folds them into its softmax state and acc.
inline void attend_chunk(const RowChunk& c, const float* qv, long hd, long valid, float scale, float& max, float& sum,
                         float* acc) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  long d = 0;
  for (; d + 4 <= hd; d += 4) {
    s0 = _mm512_fmadd_ps(_mm512_set1_ps(qv[d]), _mm512_load_ps(c.kt[d]), s0);
    s1 = _mm512_fmadd_ps(_mm512_set1_ps(qv[d + 1]), _mm512_load_ps(c.kt[d + 1]), s1);
    s2 = _mm512_fmadd_ps(_mm512_set1_ps(qv[d + 2]), _mm512_load_ps(c.kt[d + 2]), s2);
    s3 = _mm512_fmadd_ps(_mm512_set1_ps(qv[d + 3]), _mm512_load_ps(c.kt[d + 3]), s3);
  }
  for (; d < hd; ++d) s0 = _mm512_fmadd_ps(_mm512_set1_ps(qv[d]), _mm512_load_ps(c.kt[d]), s0);
  const __mmask16 m = vm::first_lanes(valid);
  const __m512 scores =
      _mm512_mask_mul_ps(_mm512_set1_ps(-__builtin_inff()), m,
                         _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)), _mm512_set1_ps(scale));
  const float chunk_max = vm::reduce_max(scores);
  const float new_max = chunk_max > max ? chunk_max : max;
  alignas(64) float weights[kPositionsPerPass];
  const __m512 e = _mm512_maskz_mov_ps(m, vm::exp(_mm512_sub_ps(scores, _mm512_set1_ps(new_max))));
  _mm512_store_ps(weights, e);
  const __m512 correction = vm::exp(_mm512_set1_ps(max - new_max));  // max = -inf at first: 0
  sum = sum * _mm512_cvtss_f32(correction) + vm::reduce_add(e);
  max = new_max;
  for (long i = 0; i < hd; i += 16) {
    const __mmask16 lanes = vm::first_lanes(hd - i);
    __m512 a = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, acc + i), correction);
    for (long j = 0; j < valid; ++j) a = _mm512_fmadd_ps(_mm512_set1_ps(weights[j]), _mm512_loadu_ps(c.vf[j] + i), a);
    _mm512_mask_storeu_ps(acc + i, lanes, a);
  }
}

template <ElementType E>
void attend_rows_as(const PagedKv& kv, const AttentionRows& a) {
  const long row_bytes = kv.head_dim * bytes_per_element(E);
  rows_walk::attend_rows_walk<RowChunk, kPositionsPerPass>(
      kv, a,
      [&](const AttentionQuery& where, long p0, long count, RowChunk& c) {
        decode_chunk<E>(kv, where, p0, count, row_bytes, c);
      },
      [](auto&&... args) { attend_chunk(args...); },
      [](float* acc, long hd, float inverse_sum) {
        const __m512 inverse = _mm512_set1_ps(inverse_sum);
        for (long i = 0; i < hd; i += 16) {
          const __mmask16 lanes = vm::first_lanes(hd - i);
          _mm512_mask_storeu_ps(acc + i, lanes, _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, acc + i), inverse));
        }
      });
}

void attend_rows(const PagedKv& kv, const AttentionRows& a) {
  switch (kv.element) {
    case ElementType::kF32: attend_rows_as<ElementType::kF32>(kv, a); break;
    case ElementType::kF16: attend_rows_as<ElementType::kF16>(kv, a); break;
    case ElementType::kBf16: attend_rows_as<ElementType::kBf16>(kv, a); break;
    case ElementType::kU8: attend_rows_as<ElementType::kU8>(kv, a); break;
    default: break;  // not a KV precision: PagedKv never holds one
  }
}

// f32 → bf16 bits, round to nearest even, NaN kept quiet: the same bits as util/half.hpp.
inline __m256i to_bf16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __mmask16 nan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, quiet));
}

void encode_u8_group(const float* x, long count, std::uint8_t* dst, float* params) {
  __m512 lo = _mm512_set1_ps(__builtin_inff()), hi = _mm512_set1_ps(-__builtin_inff());
  for (long i = 0; i < count; i += 16) {
    const __mmask16 m = vm::first_lanes(count - i);
    lo = _mm512_mask_min_ps(lo, m, lo, _mm512_maskz_loadu_ps(m, x + i));
    hi = _mm512_mask_max_ps(hi, m, hi, _mm512_maskz_loadu_ps(m, x + i));
  }
  const float min = vm::reduce_min(lo), max = vm::reduce_max(hi);
  const float scale = (max - min) / 255.0f;
  const __m512 inverse = _mm512_set1_ps(scale > 0.0f ? 1.0f / scale : 0.0f);
  for (long i = 0; i < count; i += 16) {
    const __mmask16 m = vm::first_lanes(count - i);
    __m512 code = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_set1_ps(min)), inverse);
    code = _mm512_roundscale_ps(code, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    code = _mm512_min_ps(_mm512_max_ps(code, _mm512_setzero_ps()), _mm512_set1_ps(255.0f));
    _mm_mask_storeu_epi8(dst + i, m, _mm512_cvtusepi32_epi8(_mm512_cvtps_epu32(code)));
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
  for (long i = 0; i < count; i += 16) {
    const __mmask16 m = vm::first_lanes(count - i);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    switch (element) {
      case ElementType::kF32: _mm512_mask_storeu_ps(dst + i * 4, m, v); break;
      case ElementType::kF16:
        _mm256_mask_storeu_epi16(dst + i * 2, m, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        break;
      case ElementType::kBf16: _mm256_mask_storeu_epi16(dst + i * 2, m, to_bf16(v)); break;
      case ElementType::kU8: break;
      default: break;  // not a KV precision: PagedKv never holds one
    }
  }
}

}  // namespace

namespace avx512 {
AttentionKernels attention_kernels() { return {attend, encode, attend_rows}; }
}  // namespace avx512

}  // namespace kiln::kernels
