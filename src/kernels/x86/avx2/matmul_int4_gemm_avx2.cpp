// AVX2 GEMM for int4 weights × dynamically quantised int8 activations (prefill, n > 1), for CPUs
// without AVX-512 VNNI. A register-blocked micro-kernel computes kTiles 8-row weight tiles ×
// kRows activation rows at once: each unpacked weight vector feeds kRows rows and each broadcast
// activation quadruple feeds kTiles tiles. vpmaddubsw products are summed in int16 over a whole
// 32-column chunk (16 products u4 · |q| <= 15 · 127 per lane: 30480 < 32767), widened once per chunk.
// Per integer block only an int32 → f32 conversion and one FMA by the activation scale remain;
// the weight scale and the zero-point correction are applied once per weight group, the
// correction in f32 from the activation chunk sums:
//   Σ_b s_a,b Σ_{k∈b} (u - zp) q = Σ_b s_a,b Σ_{k∈b} u q  -  zp · Σ_b s_a,b Σ_{k∈b} q.
#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx2/avx2_tile_io.hpp"

namespace kiln::kernels::avx2 {
namespace {

struct GemmShape {
  std::size_t block;       // columns per integer block, a multiple of kActivationChunk
  std::size_t in_rounded;  // in rounded up to kActivationChunk: blocks end here at the latest
  std::size_t tile_bytes;  // packed bytes per 8-row tile
  std::size_t blocks_per_act_group;
  std::size_t blocks_per_weight_group;  // a group covering the row spans all blocks
};

GemmShape gemm_shape(const PackedLayout& l, const QuantizedActivations& xq) {
  const std::size_t block = int8_block_columns(l, xq.group_size);
  const std::size_t whole_row = (l.in + block - 1) / block;
  return GemmShape{block, (l.in + kActivationChunk - 1) / kActivationChunk * kActivationChunk, l.k_padded * 4,
                   xq.group_size >= l.in ? whole_row : xq.group_size / block,
                   l.group_size >= l.in ? whole_row : l.group_size / block};
}

constexpr int kTiles = 2, kRows = 3;  // 16 ymm: 6 accumulators, 4 unpacked vectors, 2 broadcasts

// Σ u q over the 32 columns from k of every (tile, row) pair, into dot. The accumulators are
// named, not an array: GCC keeps an array indexed in loops it unrolls late on the stack.
inline void dot_chunk(const std::uint8_t* const (&tile)[kTiles], const std::int8_t* const (&q)[kRows], std::size_t k,
                      __m256i (&dot)[kTiles][kRows]) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  __m256i p00 = _mm256_setzero_si256(), p01 = p00, p02 = p00, p10 = p00, p11 = p00, p12 = p00;
#pragma GCC unroll 1  // unrolled, GCC hoists the next steps' unpacking and spills
  for (std::size_t kc = k; kc < k + kActivationChunk; kc += 8) {  // k..k+3 low nibbles, k+4..k+7 high
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile[0] + kc * 4));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile[1] + kc * 4));
    const __m256i lo0 = _mm256_and_si256(v0, low), hi0 = _mm256_and_si256(_mm256_srli_epi16(v0, 4), low);
    const __m256i lo1 = _mm256_and_si256(v1, low), hi1 = _mm256_and_si256(_mm256_srli_epi16(v1, 4), low);
    const auto row = [&](const std::int8_t* x, __m256i& acc0, __m256i& acc1) {
      const __m256i b0 = broadcast4(x + kc), b1 = broadcast4(x + kc + 4);
      acc0 = _mm256_add_epi16(acc0, _mm256_add_epi16(_mm256_maddubs_epi16(lo0, b0), _mm256_maddubs_epi16(hi0, b1)));
      acc1 = _mm256_add_epi16(acc1, _mm256_add_epi16(_mm256_maddubs_epi16(lo1, b0), _mm256_maddubs_epi16(hi1, b1)));
    };
    row(q[0], p00, p10);
    row(q[1], p01, p11);
    row(q[2], p02, p12);
  }
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i pairs[kTiles][kRows] = {{p00, p01, p02}, {p10, p11, p12}};
#pragma GCC unroll 4
  for (int u = 0; u < kTiles; ++u) {
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) dot[u][j] = _mm256_madd_epi16(pairs[u][j], ones);
  }
}

// Output tiles [t0, t0 + tiles) × activation rows [i0, i0 + rows), tiles <= kTiles, rows <= kRows.
// Fewer tiles or rows repeat the last one in the arithmetic and store it once: a remainder costs
// a full pass, which at 26 rows (passes 3,3,3,3,3,3,3,3,2) is 1/27 of the work.
template <bool kAsym, bool kOneChunk>
void gemm_micro(const PackedWeights& w, const MatmulArgs& a, const GemmShape& s, std::size_t t0, std::size_t tiles,
                std::size_t i0, std::size_t rows, const __m256i (&masks)[kTiles]) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const std::uint8_t* tile[kTiles];
#pragma GCC unroll 4
  for (int u = 0; u < kTiles; ++u) tile[u] = w.data() + (t0 + std::min<std::size_t>(u, tiles - 1)) * s.tile_bytes;
  std::size_t row_of[kRows];
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) row_of[j] = i0 + std::min<std::size_t>(j, rows - 1);
  const std::int8_t* q[kRows];
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) q[j] = xq.codes + row_of[j] * xq.row_stride;

  __m256 total[kTiles][kRows];      // Σ over finished weight groups, scaled
  __m256 group_acc[kTiles][kRows];  // Σ_b s_a,b Σ u q over the current weight group's blocks
  float zero_sum[kRows];            // Σ_b s_a,b Σ q over the same blocks
#pragma GCC unroll 4
  for (int u = 0; u < kTiles; ++u) {
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) total[u][j] = group_acc[u][j] = _mm256_setzero_ps();
  }
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) zero_sum[j] = 0.0f;

  // Group indices advance by counting blocks, not dividing.
  std::size_t act_group = 0, act_left = s.blocks_per_act_group;
  std::size_t weight_group = 0, weight_left = s.blocks_per_weight_group;
  for (std::size_t k0 = 0; k0 < l.in; k0 += s.block) {
    const std::size_t k1 = std::min(k0 + s.block, s.in_rounded);
    __m256i dot[kTiles][kRows];
    dot_chunk(tile, q, k0, dot);
    if constexpr (!kOneChunk) {
      for (std::size_t k = k0 + kActivationChunk; k < k1; k += kActivationChunk) {
        __m256i more[kTiles][kRows];
        dot_chunk(tile, q, k, more);
#pragma GCC unroll 4
        for (int u = 0; u < kTiles; ++u) {
#pragma GCC unroll 4
          for (int j = 0; j < kRows; ++j) dot[u][j] = _mm256_add_epi32(dot[u][j], more[u][j]);
        }
      }
    }
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) {
      const std::size_t i = row_of[j];
      const float act_scale = xq.scales[i * xq.groups + act_group];
      const std::int32_t* sums = xq.chunk_sums + i * xq.chunks;
      std::int32_t sum_q = sums[k0 / kActivationChunk];
      if constexpr (!kOneChunk) {
        for (std::size_t c = k0 / kActivationChunk + 1; c < k1 / kActivationChunk; ++c) sum_q += sums[c];
      }
      zero_sum[j] += act_scale * static_cast<float>(sum_q);
      const __m256 sa = _mm256_set1_ps(act_scale);
#pragma GCC unroll 4
      for (int u = 0; u < kTiles; ++u)
        group_acc[u][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[u][j]), sa, group_acc[u][j]);
    }
    if (--act_left == 0) {
      ++act_group;
      act_left = s.blocks_per_act_group;
    }
    // Blocks divide the weight group (check_activation_groups), so a group ends on a block end.
    if (--weight_left != 0 && k0 + s.block < l.in) continue;
#pragma GCC unroll 4
    for (int u = 0; u < kTiles; ++u) {
      const std::size_t at = ((t0 + std::min<std::size_t>(u, tiles - 1)) * l.groups + weight_group) * kTileRows;
      const __m256 weight_scale = load_scales(w.scales() + at);
      __m256 zero_point;
      if constexpr (kAsym) {
        zero_point = _mm256_cvtepi32_ps(load_zero_points(w.zeros() + at));
      } else {
        zero_point = _mm256_set1_ps(8.0f);  // sym codes are stored + 8
      }
#pragma GCC unroll 4
      for (int j = 0; j < kRows; ++j) {
        const __m256 exact = _mm256_fnmadd_ps(zero_point, _mm256_set1_ps(zero_sum[j]), group_acc[u][j]);
        total[u][j] = _mm256_fmadd_ps(exact, weight_scale, total[u][j]);
        group_acc[u][j] = _mm256_setzero_ps();
      }
    }
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) zero_sum[j] = 0.0f;
    ++weight_group;
    weight_left = s.blocks_per_weight_group;
  }
  for (std::size_t u = 0; u < tiles; ++u) {
    for (std::size_t j = 0; j < rows; ++j)
      store_tile(a.y + (i0 + j) * a.y_stride, t0 + u, masks[u], total[u][j], a.bias);
  }
}

// Every activation row for tiles [t0, t0 + tiles), in passes of at most kRows rows, as even as
// possible (26 rows: eight passes of 3 and one of 2).
template <bool kAsym, bool kOneChunk>
void gemm_tiles(const PackedWeights& w, const MatmulArgs& a, const GemmShape& s, std::size_t t0, std::size_t tiles,
                const __m256i (&masks)[kTiles]) {
  const std::size_t passes = (a.n + kRows - 1) / kRows;
  std::size_t i = 0;
  for (std::size_t p = 0; p < passes; ++p) {
    const std::size_t rows = a.n / passes + (p < a.n % passes ? 1 : 0);
    gemm_micro<kAsym, kOneChunk>(w, a, s, t0, tiles, i, rows, masks);
    i += rows;
  }
}

template <bool kAsym>
void gemm_int4(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const GemmShape s = gemm_shape(w.layout, *a.xq);
  const std::size_t tile_end = (row_end + kTileRows - 1) / kTileRows;
  for (std::size_t t = row_begin / kTileRows; t < tile_end; t += kTiles) {
    const std::size_t tiles = std::min<std::size_t>(kTiles, tile_end - t);
    const __m256i masks[kTiles] = {row_mask(t, row_begin, row_end), row_mask(t + 1, row_begin, row_end)};
    // A block of one chunk (activation group 32, the default) needs no loops over chunks.
    if (s.block == kActivationChunk) {
      gemm_tiles<kAsym, true>(w, a, s, t, tiles, masks);
    } else {
      gemm_tiles<kAsym, false>(w, a, s, t, tiles, masks);
    }
  }
}

}  // namespace

void register_int4_gemm_kernels(MatmulTable& table) {
  table.int8[scheme_index(WeightScheme::kInt4Sym)].gemm = gemm_int4<false>;
  table.int8[scheme_index(WeightScheme::kInt4Asym)].gemm = gemm_int4<true>;
}

}  // namespace kiln::kernels::avx2
