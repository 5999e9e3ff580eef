// AVX-512 VNNI GEMM for int4 / int8 weights × dynamically quantised int8 activations (prefill,
// n > 1). A register-blocked micro-kernel computes kTiles 16-row weight tiles × kRows activation
// rows at once: each unpacked weight vector feeds kRows rows and each broadcast activation
// quadruple feeds kTiles tiles. Per integer block only an int32 → f32 conversion and one FMA by
// the activation scale remain; the weight scale and the zero-point correction are applied once
// per weight group, the correction in f32 from the activation chunk sums:
//   Σ_b s_a,b Σ_{k∈b} (u - zp) q = Σ_b s_a,b Σ_{k∈b} u q  -  zp · Σ_b s_a,b Σ_{k∈b} q.
#include <immintrin.h>

#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "kernels/x86/avx512/int8_blocks_avx512.hpp"

namespace kiln::kernels::avx512 {
namespace {

// Int8Shape plus how many blocks each activation group and each weight group spans (a group
// covering the row spans them all).
struct GemmShape : Int8Shape {
  std::size_t blocks_per_act_group;
  std::size_t blocks_per_weight_group;
};

template <bool kInt4>
GemmShape gemm_shape(const PackedLayout& l, const QuantizedActivations& xq) {
  const Int8Shape s = int8_shape<kInt4>(l, xq);
  const std::size_t whole_row = (l.in + s.block - 1) / s.block;
  return GemmShape{s, xq.group_size >= l.in ? whole_row : xq.group_size / s.block,
                   l.group_size >= l.in ? whole_row : l.group_size / s.block};
}

// Σ u q over columns [k0, k1) of one block for every (tile, row) pair, into dot (zeroed here).
template <bool kInt4, int kTiles, int kRows>
inline void dot_tiles(const std::uint8_t* const (&tile)[kTiles], const std::int8_t* const (&q)[kRows], std::size_t k0,
                      std::size_t k1, __m512i (&dot)[kTiles][kRows]) {
#pragma GCC unroll 8
  for (int u = 0; u < kTiles; ++u) {
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) dot[u][j] = _mm512_setzero_si512();
  }
  if constexpr (kInt4) {
    const __m512i low = _mm512_set1_epi8(0x0F);
    for (std::size_t k = k0; k < k1; k += 8) {
      __m512i lo[kTiles], hi[kTiles];  // columns k..k+3 and k+4..k+7 of 16 rows
#pragma GCC unroll 8
      for (int u = 0; u < kTiles; ++u) {
        const __m512i v = _mm512_loadu_si512(tile[u] + k * 8);
        lo[u] = _mm512_and_si512(v, low);
        hi[u] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
      }
#pragma GCC unroll 8
      for (int j = 0; j < kRows; ++j) {
        const __m512i b0 = broadcast4(q[j] + k), b1 = broadcast4(q[j] + k + 4);
#pragma GCC unroll 8
        for (int u = 0; u < kTiles; ++u) {
          dot[u][j] = _mm512_dpbusd_epi32(dot[u][j], lo[u], b0);
          dot[u][j] = _mm512_dpbusd_epi32(dot[u][j], hi[u], b1);
          keep_in_register(dot[u][j]);
        }
      }
    }
  } else {
    for (std::size_t k = k0; k < k1; k += 4) {
      __m512i v[kTiles];
#pragma GCC unroll 8
      for (int u = 0; u < kTiles; ++u) v[u] = _mm512_loadu_si512(tile[u] + k * 16);
#pragma GCC unroll 8
      for (int j = 0; j < kRows; ++j) {
        const __m512i b = broadcast4(q[j] + k);
#pragma GCC unroll 8
        for (int u = 0; u < kTiles; ++u) {
          dot[u][j] = _mm512_dpbusd_epi32(dot[u][j], v[u], b);
          keep_in_register(dot[u][j]);
        }
      }
    }
  }
}

// Output tiles [t0, t0 + kTiles) × activation rows [i0, i0 + kRows).
template <bool kInt4, bool kAsym, int kTiles, int kRows>
void gemm_micro(const PackedWeights& w, const MatmulArgs& a, const GemmShape& s, std::size_t t0, std::size_t i0,
                const __mmask16 (&masks)[kTiles], Prefetch& prefetch) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const std::uint8_t* tile[kTiles];
#pragma GCC unroll 8
  for (int u = 0; u < kTiles; ++u) tile[u] = w.data() + (t0 + u) * s.tile_bytes;
  const std::int8_t* q[kRows];
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) q[j] = xq.codes + (i0 + j) * xq.row_stride;

  __m512 total[kTiles][kRows];      // Σ over finished weight groups, scaled
  __m512 group_acc[kTiles][kRows];  // Σ_b s_a,b Σ u q over the current weight group's blocks
  float zero_sum[kRows];            // Σ_b s_a,b Σ q over the same blocks
#pragma GCC unroll 8
  for (int u = 0; u < kTiles; ++u) {
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) total[u][j] = group_acc[u][j] = _mm512_setzero_ps();
  }
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) zero_sum[j] = 0.0f;

  // Group indices advance by counting blocks: a division per block would cost as much as a
  // block's dot products.
  std::size_t act_group = 0, act_left = s.blocks_per_act_group;
  std::size_t weight_group = 0, weight_left = s.blocks_per_weight_group;
  const bool one_chunk = s.block == kActivationChunk;
  for (std::size_t k0 = 0; k0 < l.in; k0 += s.block) {
    const std::size_t k1 = std::min(k0 + s.block, s.in_rounded);
    __m512i dot[kTiles][kRows];
    dot_tiles<kInt4, kTiles, kRows>(tile, q, k0, k1, dot);
    prefetch.step();
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) {
      const std::size_t i = i0 + j;
      const float act_scale = xq.scales[i * xq.groups + act_group];
      const std::int32_t* sums = xq.chunk_sums + i * xq.chunks;
      // A block of one chunk (activation group 32, the default) is one load, not a loop.
      const std::int32_t sum_q = one_chunk ? sums[k0 / kActivationChunk] : chunk_sum(sums, k0, k1);
      zero_sum[j] += act_scale * static_cast<float>(sum_q);
      const __m512 sa = _mm512_set1_ps(act_scale);
#pragma GCC unroll 8
      for (int u = 0; u < kTiles; ++u)
        group_acc[u][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[u][j]), sa, group_acc[u][j]);
    }
    if (--act_left == 0) {
      ++act_group;
      act_left = s.blocks_per_act_group;
    }
    // Blocks divide the weight group (check_activation_groups), so a group ends on a block end.
    if (--weight_left != 0 && k0 + s.block < l.in) continue;
#pragma GCC unroll 8
    for (int u = 0; u < kTiles; ++u) {
      const std::size_t at = ((t0 + u) * l.groups + weight_group) * kTileRows;
      const __m512 weight_scale = load_scales(w.scales() + at);
      __m512 zero_point;
      if constexpr (kAsym) {
        zero_point = _mm512_cvtepi32_ps(load_zero_points(w.zeros() + at));
      } else {
        zero_point = _mm512_set1_ps(kInt4 ? 8.0f : 128.0f);  // sym codes are stored + 8 / + 128
      }
#pragma GCC unroll 8
      for (int j = 0; j < kRows; ++j) {
        const __m512 exact = _mm512_fnmadd_ps(zero_point, _mm512_set1_ps(zero_sum[j]), group_acc[u][j]);
        total[u][j] = _mm512_fmadd_ps(exact, weight_scale, total[u][j]);
        group_acc[u][j] = _mm512_setzero_ps();
      }
    }
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) zero_sum[j] = 0.0f;
    ++weight_group;
    weight_left = s.blocks_per_weight_group;
  }
#pragma GCC unroll 8
  for (int u = 0; u < kTiles; ++u) {
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) store_tile(a.y + (i0 + j) * a.y_stride, t0 + u, masks[u], total[u][j], a.bias);
  }
}

// One pass of `rows` (<= kRows) activation rows from row i.
template <bool kInt4, bool kAsym, int kTiles, int kRows>
void gemm_pass(std::size_t rows, const PackedWeights& w, const MatmulArgs& a, const GemmShape& s, std::size_t t0,
               std::size_t i, const __mmask16 (&masks)[kTiles], Prefetch& prefetch) {
  if (rows == kRows) {
    gemm_micro<kInt4, kAsym, kTiles, kRows>(w, a, s, t0, i, masks, prefetch);
  } else if constexpr (kRows > 1) {
    gemm_pass<kInt4, kAsym, kTiles, kRows - 1>(rows, w, a, s, t0, i, masks, prefetch);
  }
}

// Every activation row for tiles [t0, t0 + kTiles), in passes of at most kMaxRows rows, as even as
// possible (26 rows: 4,4,4,4,4,3,3, not six 4s and a 2 that pays a whole pass's unpacking and
// epilogue for two rows). Passes after the first prefetch the tiles [t0 + kTiles, prefetch_end).
template <bool kInt4, bool kAsym, int kTiles, int kMaxRows>
void gemm_tiles(const PackedWeights& w, const MatmulArgs& a, const GemmShape& s, std::size_t t0,
                std::size_t prefetch_end, const __mmask16 (&masks)[kTiles]) {
  static_assert(kMaxRows <= 8);
  const std::size_t passes = (a.n + kMaxRows - 1) / kMaxRows;
  const std::size_t blocks = (w.layout.in + s.block - 1) / s.block;
  const std::size_t next_tiles =
      prefetch_end > t0 + kTiles ? std::min<std::size_t>(prefetch_end - t0 - kTiles, kTiles) : 0;
  const std::size_t lines = next_tiles * s.tile_bytes / 64;
  Prefetch prefetch{w.data() + (t0 + kTiles) * s.tile_bytes, w.data() + (t0 + kTiles + next_tiles) * s.tile_bytes, 0};
  std::size_t i = 0;
  for (std::size_t p = 0; p < passes; ++p) {
    const std::size_t rows = a.n / passes + (p < a.n % passes ? 1 : 0);
    gemm_pass<kInt4, kAsym, kTiles, kMaxRows>(rows, w, a, s, t0, i, masks, prefetch);
    i += rows;
    if (p == 0 && passes > 1) prefetch.lines_per_block = (lines + (passes - 1) * blocks - 1) / ((passes - 1) * blocks);
  }
}

template <bool kInt4, bool kAsym>
void gemm_int8(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const GemmShape s = gemm_shape<kInt4>(w.layout, *a.xq);
  const std::size_t tile_end = (row_end + kTileRows - 1) / kTileRows;
  std::size_t t = row_begin / kTileRows;
  for (; t + 2 <= tile_end; t += 2) {
    const __mmask16 masks[2] = {row_mask(t, row_begin, row_end), row_mask(t + 1, row_begin, row_end)};
    gemm_tiles<kInt4, kAsym, 2, 4>(w, a, s, t, tile_end, masks);
  }
  if (t < tile_end) {
    const __mmask16 masks[1] = {row_mask(t, row_begin, row_end)};
    gemm_tiles<kInt4, kAsym, 1, 8>(w, a, s, t, tile_end, masks);
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
