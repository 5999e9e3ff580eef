// AVX-512 VNNI kernels for int4 / int8 weights × dynamically quantised int8 activations.
// One vpdpbusd multiplies a 16-row × 4-column weight slice (u8, packed_weights.hpp) by 4
// broadcast activation codes (s8) and adds into 16 int32 lanes, one per output row. Per block of
// columns (int8_block_columns) the integer sum is corrected for the zero point exactly,
//   Σ (u - zp) q = Σ u q - zp Σ q    (Σ q from the activation chunk sums),
// and then scaled once: acc += float(Σ) * s_w * s_a. int4 codes are unpacked with one shift and
// two ANDs per 64 bytes (128 weights); that is the whole decode cost.
#include <immintrin.h>

#include "kernels/x86/avx512/int8_blocks_avx512.hpp"
#include "kernels/x86/avx512/matmul_avx512.hpp"

namespace kiln::kernels::avx512 {
namespace {

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

}  // namespace

void register_int8_kernels(MatmulTable& table) {
  table.int8[scheme_index(WeightScheme::kInt4Sym)].gemv = gemv_int8<true, false>;
  table.int8[scheme_index(WeightScheme::kInt4Asym)].gemv = gemv_int8<true, true>;
  table.int8[scheme_index(WeightScheme::kInt8Sym)].gemv = gemv_int8<false, false>;
  table.int8[scheme_index(WeightScheme::kInt8Asym)].gemv = gemv_int8<false, true>;
  register_int8_gemm_kernels(table);
}

}  // namespace kiln::kernels::avx512
