// AVX-512 VNNI GEMM for int4 / int8 weights × dynamically quantised int8 activations (prefill,
// n > 1): the block arithmetic of int8_blocks_avx512.hpp, with each unpacked weight vector
// feeding several activation rows so the load and unpack are paid once per group of rows.
#include <immintrin.h>

#include "kernels/x86/avx512/int8_blocks_avx512.hpp"
#include "kernels/x86/avx512/matmul_avx512.hpp"

namespace kiln::kernels::avx512 {
namespace {

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

void register_int8_gemm_kernels(MatmulTable& table) {
  table.int8[scheme_index(WeightScheme::kInt4Sym)].gemm = gemm_int8<true, false>;
  table.int8[scheme_index(WeightScheme::kInt4Asym)].gemm = gemm_int8<true, true>;
  table.int8[scheme_index(WeightScheme::kInt8Sym)].gemm = gemm_int8<false, false>;
  table.int8[scheme_index(WeightScheme::kInt8Asym)].gemm = gemm_int8<false, true>;
}

}  // namespace kiln::kernels::avx512
