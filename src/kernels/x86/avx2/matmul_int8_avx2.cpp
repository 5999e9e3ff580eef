// AVX2 kernels for int4 / int8 weights × dynamically quantised int8 activations, for CPUs
// without AVX-512 VNNI: the decode GEMV of both, and the GEMM of int8 weights (int4 has its own,
// matmul_int4_gemm_avx2.cpp). vpmaddubsw multiplies u8 by s8 into saturating int16 pairs and
// vpmaddwd widens to int32. Saturation is impossible by construction:
//   int4: u4 codes (0..15) × |q| <= 127: 16 products summed over a 32-column chunk <= 30480;
//   int8: signed weights (packed_weights.hpp) with the sign moved onto the activation
//         (|w| <= 128, |q| <= 127): a pair is <= 32512 < 32767.
// The walk is that of the AVX-512 GEMV: per integer block one int32 → f32 conversion and one FMA
// by the activation scale into a weight-group accumulator, the weight scale once per group. Group
// indices advance by counting blocks: a division per block cost a third of the decode time.
#include <immintrin.h>

#include <limits>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx2/avx2_tile_io.hpp"

namespace kiln::kernels::avx2 {
namespace {

// Geometry of one call, computed once, in 32-column chunks. int8_block_columns nests blocks in
// both kinds of group.
struct Int8Shape {
  std::size_t chunks;                   // in rounded up to kActivationChunk, in chunks
  std::size_t chunks_per_block;         // chunks summed in integers before one scale multiply
  std::size_t blocks_per_weight_group;  // the last group may have fewer; all when one covers the row
  std::size_t blocks_per_act_group;     // max() when one activation group covers the row
  std::size_t tile_bytes;               // packed bytes per 8-row tile
};

template <bool kInt4>
Int8Shape int8_shape(const PackedLayout& l, const QuantizedActivations& xq) {
  const std::size_t block = int8_block_columns(l, xq.group_size);
  const std::size_t chunks = (l.in + kActivationChunk - 1) / kActivationChunk;
  const std::size_t blocks = (chunks * kActivationChunk + block - 1) / block;
  return Int8Shape{chunks, block / kActivationChunk, l.group_size >= l.in ? blocks : l.group_size / block,
                   xq.group_size >= l.in ? std::numeric_limits<std::size_t>::max() : xq.group_size / block,
                   l.k_padded * (kInt4 ? 4 : 8)};
}

// Adds Σ stored · q over the 32 columns of one tile's chunk at w to dot[j] (8 int32 lanes) for
// each activation row j, whose chunk starts at q[j]; each weight vector is loaded and unpacked
// once for all rows.
template <bool kInt4, int kRows>
inline void add_chunk_dots(const std::uint8_t* w, const std::int8_t* const (&q)[kRows], __m256i (&dot)[kRows]) {
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (kInt4) {  // int16 sums over the chunk, widened once
    const __m256i low = _mm256_set1_epi8(0x0F);
    __m256i pairs[kRows];
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) pairs[j] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (std::size_t kc = 0; kc < kActivationChunk; kc += 8) {  // kc..kc+3 low nibbles, kc+4.. high
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + kc * 4));
      const __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
#pragma GCC unroll 4
      for (int j = 0; j < kRows; ++j) {
        pairs[j] = _mm256_add_epi16(pairs[j], _mm256_add_epi16(_mm256_maddubs_epi16(lo, broadcast4(q[j] + kc)),
                                                               _mm256_maddubs_epi16(hi, broadcast4(q[j] + kc + 4))));
      }
    }
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) dot[j] = _mm256_add_epi32(dot[j], _mm256_madd_epi16(pairs[j], ones));
  } else {
#pragma GCC unroll 8
    for (std::size_t kc = 0; kc < kActivationChunk; kc += 4) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + kc * 8));
      const __m256i magnitude = _mm256_abs_epi8(v);
#pragma GCC unroll 4
      for (int j = 0; j < kRows; ++j) {
        const __m256i p = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(broadcast4(q[j] + kc), v));
        dot[j] = _mm256_add_epi32(dot[j], _mm256_madd_epi16(p, ones));
      }
    }
  }
}

// One 8-row tile for activation rows [i0, i0 + kRows); kRows rows share each tile load (1 for
// decode). Symmetric codes are stored with an offset (int4: + 8; int8: none), removed exactly in
// integers per block; asymmetric zero points are per weight group, removed once per group in f32:
//   Σ_b s_a,b Σ_{k∈b} (u - zp) q = Σ_b s_a,b Σ_{k∈b} u q  -  zp · Σ_b s_a,b Σ_{k∈b} q.
template <bool kInt4, bool kAsym, bool kOneChunk, int kRows>
void int8_rows(const PackedWeights& w, const MatmulArgs& a, const Int8Shape& s, std::size_t t, std::size_t i0,
               __m256i mask) {
  constexpr std::size_t kChunkBytes = kActivationChunk * kTileRows / (kInt4 ? 2 : 1);
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  // Everything the walk reads advances by pointer: the tile's chunks, each row's codes, chunk
  // sums and activation scales, the tile's scales and zero points.
  const std::uint8_t* chunk = w.data() + t * s.tile_bytes;
  const std::uint16_t* scales = w.scales() + t * l.groups * kTileRows;
  const std::uint8_t* zeros = w.zeros() + t * l.groups * kTileRows;
  const std::int8_t* q[kRows];
  const float* act_scale[kRows];
  const std::int32_t* sums[kRows];
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) {
    q[j] = xq.codes + (i0 + j) * xq.row_stride;
    act_scale[j] = xq.scales + (i0 + j) * xq.groups;
    sums[j] = xq.chunk_sums + (i0 + j) * xq.chunks;
  }
  __m256 acc[kRows];
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) acc[j] = _mm256_setzero_ps();
  std::size_t act_left = s.blocks_per_act_group;
  for (std::size_t chunks_left = s.chunks; chunks_left > 0; scales += kTileRows, zeros += kTileRows) {
    __m256 group_acc[kRows];
    float zero_term[kRows];  // Σ_b s_a,b Σ q, asymmetric only
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) {
      group_acc[j] = _mm256_setzero_ps();
      zero_term[j] = 0.0f;
    }
    for (std::size_t b = 0; b < s.blocks_per_weight_group && chunks_left > 0; ++b) {
      const std::size_t block_chunks = kOneChunk ? 1 : std::min(s.chunks_per_block, chunks_left);
      __m256i dot[kRows];
      std::int32_t sum_q[kRows];
#pragma GCC unroll 4
      for (int j = 0; j < kRows; ++j) {
        dot[j] = _mm256_setzero_si256();
        sum_q[j] = 0;
      }
      for (std::size_t c = 0; c < block_chunks; ++c) {
        add_chunk_dots<kInt4, kRows>(chunk, q, dot);
        chunk += kChunkBytes;
#pragma GCC unroll 4
        for (int j = 0; j < kRows; ++j) {
          q[j] += kActivationChunk;
          sum_q[j] += *sums[j]++;
        }
      }
      chunks_left -= block_chunks;
#pragma GCC unroll 4
      for (int j = 0; j < kRows; ++j) {
        if constexpr (kAsym) {
          zero_term[j] += *act_scale[j] * static_cast<float>(sum_q[j]);
        } else if constexpr (kInt4) {
          dot[j] = _mm256_sub_epi32(dot[j], _mm256_set1_epi32(8 * sum_q[j]));
        }
        group_acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[j]), _mm256_set1_ps(*act_scale[j]), group_acc[j]);
      }
      if (--act_left == 0) {
#pragma GCC unroll 4
        for (int j = 0; j < kRows; ++j) ++act_scale[j];
        act_left = s.blocks_per_act_group;
      }
    }
    const __m256 weight_scale = load_scales(scales);
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) {
      if constexpr (kAsym) {
        __m256 zero_point = _mm256_cvtepi32_ps(load_zero_points(zeros));
        if constexpr (!kInt4) zero_point = _mm256_sub_ps(zero_point, _mm256_set1_ps(128.0f));  // codes stored - 128
        group_acc[j] = _mm256_fnmadd_ps(zero_point, _mm256_set1_ps(zero_term[j]), group_acc[j]);
      }
      acc[j] = _mm256_fmadd_ps(group_acc[j], weight_scale, acc[j]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) store_tile(a.y + (i0 + j) * a.y_stride, t, mask, acc[j], a.bias);
}

// Decode: the row range's tiles in turn, each for every activation row (one in decode).
template <bool kInt4, bool kAsym, bool kOneChunk>
void gemv_rows(const PackedWeights& w, const MatmulArgs& a, const Int8Shape& s, std::size_t row_begin,
               std::size_t row_end) {
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
    const __m256i mask = row_mask(t, row_begin, row_end);
    for (std::size_t i = 0; i < a.n; ++i) int8_rows<kInt4, kAsym, kOneChunk, 1>(w, a, s, t, i, mask);
  }
}

// Prefill of int8 weights: up to four activation rows share each tile load.
template <bool kAsym, bool kOneChunk>
void gemm_rows(const PackedWeights& w, const MatmulArgs& a, const Int8Shape& s, std::size_t row_begin,
               std::size_t row_end) {
  constexpr int kRows = 4;  // 4 int block sums, 4 group and 4 total accumulators: 12 of 16 ymm
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
    const __m256i mask = row_mask(t, row_begin, row_end);
    std::size_t i = 0;
    for (; i + kRows <= a.n; i += kRows) int8_rows<false, kAsym, kOneChunk, kRows>(w, a, s, t, i, mask);
    switch (a.n - i) {
      case 3: int8_rows<false, kAsym, kOneChunk, 3>(w, a, s, t, i, mask); break;
      case 2: int8_rows<false, kAsym, kOneChunk, 2>(w, a, s, t, i, mask); break;
      case 1: int8_rows<false, kAsym, kOneChunk, 1>(w, a, s, t, i, mask); break;
      default: break;
    }
  }
}

// A block of one chunk (activation groups of 32, the default) needs no loops over chunks.
template <bool kInt4, bool kAsym>
void gemv_int8(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const Int8Shape s = int8_shape<kInt4>(w.layout, *a.xq);
  if (s.chunks_per_block == 1) {
    gemv_rows<kInt4, kAsym, true>(w, a, s, row_begin, row_end);
  } else {
    gemv_rows<kInt4, kAsym, false>(w, a, s, row_begin, row_end);
  }
}

template <bool kAsym>
void gemm_int8(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const Int8Shape s = int8_shape<false>(w.layout, *a.xq);
  if (s.chunks_per_block == 1) {
    gemm_rows<kAsym, true>(w, a, s, row_begin, row_end);
  } else {
    gemm_rows<kAsym, false>(w, a, s, row_begin, row_end);
  }
}

}  // namespace

void register_int8_kernels(MatmulTable& table) {
  table.int8[scheme_index(WeightScheme::kInt4Sym)].gemv = gemv_int8<true, false>;
  table.int8[scheme_index(WeightScheme::kInt4Asym)].gemv = gemv_int8<true, true>;
  table.int8[scheme_index(WeightScheme::kInt8Sym)] = {gemv_int8<false, false>, gemm_int8<false>};
  table.int8[scheme_index(WeightScheme::kInt8Asym)] = {gemv_int8<false, true>, gemm_int8<true>};
}

}  // namespace kiln::kernels::avx2
