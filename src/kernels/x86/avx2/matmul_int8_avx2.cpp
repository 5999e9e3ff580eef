// AVX2 kernels for int4 / int8 weights × dynamically quantised int8 activations, for CPUs
// without AVX-512 VNNI. vpmaddubsw multiplies u8 by s8 into saturating int16 pairs and vpmaddwd
// widens to int32. Saturation is impossible by construction:
//   int4: u4 codes (0..15) × |q| <= 127: a pair is <= 3810, four pairs summed <= 15240;
//   int8: signed weights (packed_weights.hpp) with the sign moved onto the activation
//         (|w| <= 128, |q| <= 127): a pair is <= 32512 < 32767.
// The block structure and the exact zero-point correction are those of the AVX-512 kernels.
#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx2/avx2_tile_io.hpp"
#include "kernels/x86/avx2/matmul_avx2.hpp"

namespace kiln::kernels::avx2 {
namespace {

struct Int8Shape {
  std::size_t block;       // columns per integer block
  std::size_t in_rounded;  // in rounded up to 32
  std::size_t tile_bytes;  // packed bytes per 8-row tile
};

template <bool kInt4>
Int8Shape int8_shape(const PackedLayout& l, const QuantizedActivations& xq) {
  return Int8Shape{int8_block_columns(l, xq.group_size), (l.in + 31) / 32 * 32,
                   l.k_padded * (kInt4 ? 4 : 8)};
}

inline std::int32_t chunk_sum(const std::int32_t* sums, std::size_t k0, std::size_t k1) {
  std::int32_t s = 0;
  for (std::size_t c = k0 / kActivationChunk; c < k1 / kActivationChunk; ++c) s += sums[c];
  return s;
}

// Σ (code - zp) q from Σ stored · q. Stored int4 codes are u4 (sym: code + 8); stored int8
// codes are s8 (sym: the code; asym: code - 128, so the zero point moves by -128 too).
template <bool kInt4, bool kAsym>
inline __m256i subtract_zero_point(__m256i dot, const std::uint8_t* zeros, std::int32_t sum_q) {
  if constexpr (kAsym) {
    __m256i zp = load_zero_points(zeros);
    if constexpr (!kInt4) zp = _mm256_sub_epi32(zp, _mm256_set1_epi32(128));
    return _mm256_sub_epi32(dot, _mm256_mullo_epi32(zp, _mm256_set1_epi32(sum_q)));
  } else if constexpr (kInt4) {
    return _mm256_sub_epi32(dot, _mm256_set1_epi32(8 * sum_q));
  } else {
    return dot;
  }
}

// 16 columns of one 8-row tile for one activation row: Σ stored · q in 8 int32 lanes.
template <bool kInt4>
inline __m256i dot16(const std::uint8_t* tile, const std::int8_t* q, std::size_t k) {
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (kInt4) {
    const __m256i low = _mm256_set1_epi8(0x0F);
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + k * 4));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + k * 4 + 32));
    __m256i p = _mm256_maddubs_epi16(_mm256_and_si256(v0, low), broadcast4(q + k));
    p = _mm256_add_epi16(p, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v0, 4), low),
                                                 broadcast4(q + k + 4)));
    p = _mm256_add_epi16(p, _mm256_maddubs_epi16(_mm256_and_si256(v1, low), broadcast4(q + k + 8)));
    p = _mm256_add_epi16(p, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v1, 4), low),
                                                 broadcast4(q + k + 12)));
    return _mm256_madd_epi16(p, ones);
  } else {
    __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + (k + 4 * j) * 8));
      const __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(broadcast4(q + k + 4 * j), w));
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(p, ones));
    }
    return sum;
  }
}

// Any n: each activation row streams the tiles of the row range; kRows rows share each tile
// load (1 for decode).
template <bool kInt4, bool kAsym, int kRows>
void int8_rows(const PackedWeights& w, const MatmulArgs& a, const Int8Shape& s, std::size_t t,
               std::size_t i0, __m256i mask) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const std::uint8_t* tile = w.data() + t * s.tile_bytes;
  const std::uint16_t* scales = w.scales() + t * l.groups * kTileRows;
  const std::uint8_t* zeros = w.zeros() + t * l.groups * kTileRows;
  __m256 acc[kRows];
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) acc[j] = _mm256_setzero_ps();
  for (std::size_t k0 = 0; k0 < l.in; k0 += s.block) {
    const std::size_t k1 = std::min(k0 + s.block, s.in_rounded);
    __m256i dot[kRows];
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) dot[j] = _mm256_setzero_si256();
    for (std::size_t k = k0; k < k1; k += 16) {
#pragma GCC unroll 4
      for (int j = 0; j < kRows; ++j) {
        dot[j] = _mm256_add_epi32(dot[j], dot16<kInt4>(tile, xq.codes + (i0 + j) * xq.row_stride, k));
      }
    }
    const std::size_t g = k0 / l.group_size;
    const __m256 weight_scale = load_scales(scales + g * kTileRows);
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) {
      const std::size_t i = i0 + j;
      const __m256i exact = subtract_zero_point<kInt4, kAsym>(
          dot[j], zeros + g * kTileRows, chunk_sum(xq.chunk_sums + i * xq.chunks, k0, k1));
      const __m256 scale = _mm256_mul_ps(
          weight_scale, _mm256_set1_ps(xq.scales[i * xq.groups + k0 / xq.group_size]));
      acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(exact), scale, acc[j]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) store_tile(a.y + (i0 + j) * a.y_stride, t, mask, acc[j], a.bias);
}

template <bool kInt4, bool kAsym>
void matmul_int8(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin,
                 std::size_t row_end) {
  constexpr int kRows = 4;  // 16 ymm registers: 4 int + 4 float accumulators and temporaries
  const Int8Shape s = int8_shape<kInt4>(w.layout, *a.xq);
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
    const __m256i mask = row_mask(t, row_begin, row_end);
    std::size_t i = 0;
    for (; i + kRows <= a.n; i += kRows) int8_rows<kInt4, kAsym, kRows>(w, a, s, t, i, mask);
    switch (a.n - i) {
      case 3: int8_rows<kInt4, kAsym, 3>(w, a, s, t, i, mask); break;
      case 2: int8_rows<kInt4, kAsym, 2>(w, a, s, t, i, mask); break;
      case 1: int8_rows<kInt4, kAsym, 1>(w, a, s, t, i, mask); break;
      default: break;
    }
  }
}

}  // namespace

void register_int8_kernels(MatmulTable& table) {
  table.int8[scheme_index(WeightScheme::kInt4Sym)] = {matmul_int8<true, false>, matmul_int8<true, false>};
  table.int8[scheme_index(WeightScheme::kInt4Asym)] = {matmul_int8<true, true>, matmul_int8<true, true>};
  table.int8[scheme_index(WeightScheme::kInt8Sym)] = {matmul_int8<false, false>, matmul_int8<false, false>};
  table.int8[scheme_index(WeightScheme::kInt8Asym)] = {matmul_int8<false, true>, matmul_int8<false, true>};
}

}  // namespace kiln::kernels::avx2
