// AVX-512 VNNI kernels for int4 / int8 weights × dynamically quantised int8 activations.
// One vpdpbusd multiplies a 16-row × 4-column weight slice (u8, packed_weights.hpp) by 4
// broadcast activation codes (s8) and adds into 16 int32 lanes, one per output row. Per block of
// columns (int8_block_columns) the integer sum is corrected for the zero point exactly,
//   Σ (u - zp) q = Σ u q - zp Σ q    (Σ q from the activation chunk sums),
// and then scaled once: acc += float(Σ) * s_w * s_a. int4 codes are unpacked with one shift and
// two ANDs per 64 bytes (128 weights); that is the whole decode cost.
#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx512/avx512_tile_io.hpp"
#include "kernels/x86/avx512/matmul_avx512.hpp"

namespace kiln::kernels::avx512 {
namespace {

// Geometry of one call, computed once.
struct Int8Shape {
  std::size_t block;       // columns per integer block
  std::size_t in_rounded;  // in rounded up to 32: blocks end here at the latest
  std::size_t tile_bytes;  // packed bytes per 16-row tile
};

template <bool kInt4>
Int8Shape int8_shape(const PackedLayout& l, const QuantizedActivations& xq) {
  return Int8Shape{int8_block_columns(l, xq.group_size), (l.in + 31) / 32 * 32,
                   l.k_padded * (kInt4 ? 8 : 16)};
}

inline std::int32_t chunk_sum(const std::int32_t* sums, std::size_t k0, std::size_t k1) {
  std::int32_t s = 0;
  for (std::size_t c = k0 / kActivationChunk; c < k1 / kActivationChunk; ++c) s += sums[c];
  return s;
}

// The exact integer Σ (u - zp) q of one block, from Σ u q.
template <bool kInt4, bool kAsym>
inline __m512i subtract_zero_point(__m512i dot, const std::uint8_t* zeros, std::int32_t sum_q) {
  if constexpr (kAsym) {
    return _mm512_sub_epi32(dot, _mm512_mullo_epi32(load_zero_points(zeros), _mm512_set1_epi32(sum_q)));
  } else {
    constexpr std::int32_t kOffset = kInt4 ? 8 : 128;  // sym codes are stored + 8 / + 128
    return _mm512_sub_epi32(dot, _mm512_set1_epi32(kOffset * sum_q));
  }
}

// Σ u q over columns [k0, k1) of one tile for one activation row; 4 accumulators break the
// vpdpbusd dependency chain.
template <bool kInt4>
inline __m512i dot_block(const std::uint8_t* tile, const std::int8_t* q, std::size_t k0,
                         std::size_t k1) {
  __m512i d0 = _mm512_setzero_si512(), d1 = d0, d2 = d0, d3 = d0;
  if constexpr (kInt4) {
    const __m512i low = _mm512_set1_epi8(0x0F);
    for (std::size_t k = k0; k < k1; k += 16) {
      const __m512i v0 = _mm512_loadu_si512(tile + k * 8);
      const __m512i v1 = _mm512_loadu_si512(tile + k * 8 + 64);
      d0 = _mm512_dpbusd_epi32(d0, _mm512_and_si512(v0, low), broadcast4(q + k));
      d1 = _mm512_dpbusd_epi32(d1, _mm512_and_si512(_mm512_srli_epi16(v0, 4), low), broadcast4(q + k + 4));
      d2 = _mm512_dpbusd_epi32(d2, _mm512_and_si512(v1, low), broadcast4(q + k + 8));
      d3 = _mm512_dpbusd_epi32(d3, _mm512_and_si512(_mm512_srli_epi16(v1, 4), low), broadcast4(q + k + 12));
    }
  } else {
    for (std::size_t k = k0; k < k1; k += 16) {
      d0 = _mm512_dpbusd_epi32(d0, _mm512_loadu_si512(tile + k * 16), broadcast4(q + k));
      d1 = _mm512_dpbusd_epi32(d1, _mm512_loadu_si512(tile + k * 16 + 64), broadcast4(q + k + 4));
      d2 = _mm512_dpbusd_epi32(d2, _mm512_loadu_si512(tile + k * 16 + 128), broadcast4(q + k + 8));
      d3 = _mm512_dpbusd_epi32(d3, _mm512_loadu_si512(tile + k * 16 + 192), broadcast4(q + k + 12));
    }
  }
  return _mm512_add_epi32(_mm512_add_epi32(d0, d1), _mm512_add_epi32(d2, d3));
}

// Decode (n small): each activation row streams every tile of the row range once.
template <bool kInt4, bool kAsym>
void gemv_int8(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin,
               std::size_t row_end) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const Int8Shape s = int8_shape<kInt4>(l, xq);
  for (std::size_t i = 0; i < a.n; ++i) {
    const std::int8_t* q = xq.codes + i * xq.row_stride;
    const float* act_scales = xq.scales + i * xq.groups;
    const std::int32_t* sums = xq.chunk_sums + i * xq.chunks;
    for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
      const std::uint8_t* tile = w.data() + t * s.tile_bytes;
      const std::uint16_t* scales = w.scales() + t * l.groups * kTileRows;
      const std::uint8_t* zeros = w.zeros() + t * l.groups * kTileRows;
      __m512 acc = _mm512_setzero_ps();
      for (std::size_t k0 = 0; k0 < l.in; k0 += s.block) {
        const std::size_t k1 = std::min(k0 + s.block, s.in_rounded);
        const std::size_t g = k0 / l.group_size;
        const __m512i dot = subtract_zero_point<kInt4, kAsym>(
            dot_block<kInt4>(tile, q, k0, k1), zeros + g * kTileRows, chunk_sum(sums, k0, k1));
        const __m512 scale = _mm512_mul_ps(load_scales(scales + g * kTileRows),
                                           _mm512_set1_ps(act_scales[k0 / xq.group_size]));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc);
      }
      store_tile(a.y + i * a.y_stride, t, row_mask(t, row_begin, row_end), acc, a.bias);
    }
  }
}

// Prefill: a tile's unpacked weights feed kRows activation rows at once, so the unpack and the
// weight load are paid once per kRows rows.
template <bool kInt4, bool kAsym, int kRows>
void gemm_int8_rows(const PackedWeights& w, const MatmulArgs& a, const Int8Shape& s,
                    std::size_t t, std::size_t i0, __mmask16 mask) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const std::uint8_t* tile = w.data() + t * s.tile_bytes;
  const std::uint16_t* scales = w.scales() + t * l.groups * kTileRows;
  const std::uint8_t* zeros = w.zeros() + t * l.groups * kTileRows;
  const std::int8_t* q[kRows];
  __m512 acc[kRows];
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) {
    q[j] = xq.codes + (i0 + j) * xq.row_stride;
    acc[j] = _mm512_setzero_ps();
  }
  const __m512i low = _mm512_set1_epi8(0x0F);
  for (std::size_t k0 = 0; k0 < l.in; k0 += s.block) {
    const std::size_t k1 = std::min(k0 + s.block, s.in_rounded);
    __m512i dot[kRows];
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) dot[j] = _mm512_setzero_si512();
    if constexpr (kInt4) {
      for (std::size_t k = k0; k < k1; k += 8) {
        const __m512i v = _mm512_loadu_si512(tile + k * 8);
        const __m512i lo = _mm512_and_si512(v, low);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
#pragma GCC unroll 8
        for (int j = 0; j < kRows; ++j) {
          dot[j] = _mm512_dpbusd_epi32(dot[j], lo, broadcast4(q[j] + k));
          dot[j] = _mm512_dpbusd_epi32(dot[j], hi, broadcast4(q[j] + k + 4));
        }
      }
    } else {
      for (std::size_t k = k0; k < k1; k += 4) {
        const __m512i v = _mm512_loadu_si512(tile + k * 16);
#pragma GCC unroll 8
        for (int j = 0; j < kRows; ++j) dot[j] = _mm512_dpbusd_epi32(dot[j], v, broadcast4(q[j] + k));
      }
    }
    const std::size_t g = k0 / l.group_size;
    const __m512 weight_scale = load_scales(scales + g * kTileRows);
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) {
      const std::size_t i = i0 + j;
      const std::int32_t sum_q = chunk_sum(xq.chunk_sums + i * xq.chunks, k0, k1);
      const __m512i exact = subtract_zero_point<kInt4, kAsym>(dot[j], zeros + g * kTileRows, sum_q);
      const __m512 scale =
          _mm512_mul_ps(weight_scale, _mm512_set1_ps(xq.scales[i * xq.groups + k0 / xq.group_size]));
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact), scale, acc[j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) store_tile(a.y + (i0 + j) * a.y_stride, t, mask, acc[j], a.bias);
}

template <bool kInt4, bool kAsym>
void gemm_int8(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin,
               std::size_t row_end) {
  constexpr int kRows = 6;
  const Int8Shape s = int8_shape<kInt4>(w.layout, *a.xq);
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
    const __mmask16 mask = row_mask(t, row_begin, row_end);
    std::size_t i = 0;
    for (; i + kRows <= a.n; i += kRows) gemm_int8_rows<kInt4, kAsym, kRows>(w, a, s, t, i, mask);
    switch (a.n - i) {
      case 5: gemm_int8_rows<kInt4, kAsym, 5>(w, a, s, t, i, mask); break;
      case 4: gemm_int8_rows<kInt4, kAsym, 4>(w, a, s, t, i, mask); break;
      case 3: gemm_int8_rows<kInt4, kAsym, 3>(w, a, s, t, i, mask); break;
      case 2: gemm_int8_rows<kInt4, kAsym, 2>(w, a, s, t, i, mask); break;
      case 1: gemm_int8_rows<kInt4, kAsym, 1>(w, a, s, t, i, mask); break;
      default: break;
    }
  }
}

}  // namespace

void register_int8_kernels(MatmulTable& table) {
  table.int8[scheme_index(WeightScheme::kInt4Sym)] = {gemv_int8<true, false>, gemm_int8<true, false>};
  table.int8[scheme_index(WeightScheme::kInt4Asym)] = {gemv_int8<true, true>, gemm_int8<true, true>};
  table.int8[scheme_index(WeightScheme::kInt8Sym)] = {gemv_int8<false, false>, gemm_int8<false, false>};
  table.int8[scheme_index(WeightScheme::kInt8Asym)] = {gemv_int8<false, true>, gemm_int8<false, true>};
}

}  // namespace kiln::kernels::avx512
