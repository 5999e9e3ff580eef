// AVX-512 VNNI kernels for int4 / int8 weights × dynamically quantised int8 activations.
// One vpdpbusd multiplies a 16-row × 4-column weight slice (u8, packed_weights.hpp) by 4
// broadcast activation codes (s8) and adds into 16 int32 lanes, one per output row.
// The decode GEMV walks each tile one weight group at a time: per block of columns
// (int8_block_columns) the integer sum is scaled by the block's activation scale into a group
// accumulator, and the weight scale and zero point are applied once per group:
//   Σ_b s_a(b) Σ (u - zp) q = Σ_b s_a(b) Σ u q - zp Σ_b s_a(b) Σ q   (Σ q from the chunk sums).
// Symmetric codes (stored + 8 / + 128) subtract their constant offset exactly, in integers, per
// block. Group and activation-scale indices are counted, never divided (two 64-bit divisions per
// 32-column block had cost about a third of the kernel's time on cache-resident weights).
#include <immintrin.h>

#include <limits>

#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "kernels/x86/avx512/int8_blocks_avx512.hpp"

namespace kiln::kernels::avx512 {
namespace {

// Σ u q over columns [k0, k1) of one tile for one activation row. For int4 the high nibbles are
// masked in place (16 u) and their sums shifted back once per block, which saves the shift per
// 64 bytes; the exact product 16 u q fits int32 for any block (int8_block_columns <= 16384).
template <bool kInt4>
inline __m512i gemv_dot_block(const std::uint8_t* tile, const std::int8_t* q, std::size_t k0, std::size_t k1) {
  __m512i d0 = _mm512_setzero_si512(), d1 = d0, d2 = d0, d3 = d0;
  if constexpr (kInt4) {
    const __m512i low = _mm512_set1_epi8(0x0F), high = _mm512_set1_epi8(static_cast<char>(0xF0));
    for (std::size_t k = k0; k < k1; k += 16) {
      const std::uint8_t* p = tile + k * 8;
      const __m512i v0 = _mm512_loadu_si512(p);
      const __m512i v1 = _mm512_loadu_si512(p + 64);
      d0 = _mm512_dpbusd_epi32(d0, _mm512_and_si512(v0, low), broadcast4(q + k));
      d1 = _mm512_dpbusd_epi32(d1, _mm512_and_si512(v0, high), broadcast4(q + k + 4));
      d2 = _mm512_dpbusd_epi32(d2, _mm512_and_si512(v1, low), broadcast4(q + k + 8));
      d3 = _mm512_dpbusd_epi32(d3, _mm512_and_si512(v1, high), broadcast4(q + k + 12));
    }
    return _mm512_add_epi32(_mm512_add_epi32(d0, d2), _mm512_srai_epi32(_mm512_add_epi32(d1, d3), 4));
  } else {
    for (std::size_t k = k0; k < k1; k += 16) {
      const std::uint8_t* p = tile + k * 16;
      d0 = _mm512_dpbusd_epi32(d0, _mm512_loadu_si512(p), broadcast4(q + k));
      d1 = _mm512_dpbusd_epi32(d1, _mm512_loadu_si512(p + 64), broadcast4(q + k + 4));
      d2 = _mm512_dpbusd_epi32(d2, _mm512_loadu_si512(p + 128), broadcast4(q + k + 8));
      d3 = _mm512_dpbusd_epi32(d3, _mm512_loadu_si512(p + 192), broadcast4(q + k + 12));
    }
    return _mm512_add_epi32(_mm512_add_epi32(d0, d1), _mm512_add_epi32(d2, d3));
  }
}

// Decode (n small): each activation row streams every tile of the row range once.
template <bool kInt4, bool kAsym>
void gemv_int8(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const Int8Shape s = int8_shape<kInt4>(l, xq);
  // Columns per weight group (the whole row when one group covers it) and blocks per activation
  // group; int8_block_columns nests blocks in both.
  const std::size_t span = l.group_size >= l.in ? s.in_rounded : l.group_size;
  const std::size_t blocks_per_act =
      xq.group_size >= l.in ? std::numeric_limits<std::size_t>::max() : xq.group_size / s.block;
  constexpr std::int32_t kOffset = kInt4 ? 8 : 128;  // sym codes are stored + 8 / + 128
  for (std::size_t i = 0; i < a.n; ++i) {
    const std::int8_t* q = xq.codes + i * xq.row_stride;
    const float* act_scales = xq.scales + i * xq.groups;
    const std::int32_t* sums = xq.chunk_sums + i * xq.chunks;
    for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
      const std::uint8_t* tile = w.data() + t * s.tile_bytes;
      const std::uint16_t* scales = w.scales() + t * l.groups * kTileRows;
      const std::uint8_t* zeros = w.zeros() + t * l.groups * kTileRows;
      __m512 acc = _mm512_setzero_ps();
      std::size_t act = 0, act_left = blocks_per_act;
      for (std::size_t g0 = 0, g = 0; g0 < l.in; g0 += span, ++g) {
        const std::size_t g1 = g0 + span >= l.in ? s.in_rounded : g0 + span;
        __m512 group_acc = _mm512_setzero_ps();
        float zero_term = 0.0f;  // Σ_b s_a(b) Σ q, asymmetric only
        for (std::size_t k0 = g0; k0 < g1; k0 += s.block) {
          const std::size_t k1 = std::min(k0 + s.block, g1);
          const float act_scale = act_scales[act];
          if (--act_left == 0) {
            ++act;
            act_left = blocks_per_act;
          }
          __m512i dot = gemv_dot_block<kInt4>(tile, q, k0, k1);
          if constexpr (kAsym) {
            zero_term += act_scale * static_cast<float>(chunk_sum(sums, k0, k1));
          } else {
            dot = _mm512_sub_epi32(dot, _mm512_set1_epi32(kOffset * chunk_sum(sums, k0, k1)));
          }
          group_acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(act_scale), group_acc);
        }
        if constexpr (kAsym) {
          group_acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(load_zero_points(zeros + g * kTileRows)),
                                       _mm512_set1_ps(zero_term), group_acc);
        }
        acc = _mm512_fmadd_ps(load_scales(scales + g * kTileRows), group_acc, acc);
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
