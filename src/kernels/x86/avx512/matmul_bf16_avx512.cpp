// AVX-512 BF16 kernel for bf16 weights: one vdpbf16ps multiplies a 16-row × 2-column bf16
// slice by a broadcast pair of activations (rounded to bf16 with vcvtne2ps2bf16, RNE like
// f32_to_bf16) and adds both products into 16 f32 lanes.
// Register-blocked: a micro-kernel keeps up to 4 weight tiles × 6 activation rows of f32
// accumulators (24 zmm), so each weight slice loaded feeds 6 rows and each broadcast pair feeds
// 4 tiles. The activations of a row block are converted to bf16 pairs once per k-block and reused
// by every weight tile of the call; k-blocks of 512 columns keep 4 tiles' slices (64 KiB) and the
// block's pairs (48 KiB) in L2.
// NOTE: the bf16 conversion treats f32 subnormal inputs as zero; activations that small (below
// 1.2e-38) do not occur in a transformer's hidden states.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "kernels/x86/avx512/avx512_tile_io.hpp"

namespace kiln::kernels::avx512 {
namespace {

constexpr std::size_t kBlockColumns = 512;  // k-block
constexpr std::size_t kBlockPairs = kBlockColumns / 2;
constexpr std::size_t kBlockRows = 48;    // activation rows converted per block (multiple of 6)
constexpr int kMaxTiles = 4;              // weight tiles per micro-kernel
constexpr int kMaxRows = 6;               // activation rows per micro-kernel
constexpr std::size_t kPrefetchRows = 4;  // rows of x converted ahead of their prefetch

// pairs[p] = bf16(x[k0 + 2p]) | bf16(x[k0 + 2p + 1]) << 16 for columns [k0, k0 + count), zero
// beyond `in`. `ahead` (a later row of x, or null) is prefetched over the same columns: every
// call re-reads x from L3 or memory, and a row's 2 KiB run is too short to train the hardware
// prefetcher (the loads were 11% of a 1B calibration's CPU time).
void convert_pairs(const float* x, std::size_t k0, std::size_t count, std::size_t in, std::uint32_t* pairs,
                   const float* ahead) {
  for (std::size_t k = k0; k < k0 + count; k += 32) {
    if (ahead && k < in) {
      _mm_prefetch(reinterpret_cast<const char*>(ahead + k), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(ahead + std::min(k + 16, in - 1)), _MM_HINT_T0);
    }
    const auto lanes = [&](std::size_t from) -> __mmask16 {
      if (from >= in) return 0;
      return in - from >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (in - from)) - 1u);
    };
    const __m512 lo = _mm512_maskz_loadu_ps(lanes(k), x + k);
    const __m512 hi = _mm512_maskz_loadu_ps(lanes(k + 16), x + k + 16);
    const __m512bh packed = _mm512_cvtne2ps_pbh(hi, lo);
    _mm512_storeu_si512(pairs + (k - k0) / 2, (__m512i)packed);
  }
}

// One micro-kernel call: kTiles consecutive weight tiles × kRows activation rows over one
// k-block.
struct MicroArgs {
  const std::uint8_t* tiles;   // first tile's pair 0 of the k-block; 64 bytes per pair
  std::size_t tile_stride;     // bytes between consecutive tiles
  const std::uint32_t* pairs;  // [kRows][kBlockPairs] bf16 pairs of the rows
  std::size_t pair_count;
  float* y;  // first row's output at the first tile's column
  std::size_t y_stride;
  const __mmask16* masks;  // [kTiles] lanes of each tile inside the call's row range
  const float* bias;       // at the first tile's column; null: none
  bool first;              // first k-block: start from the bias (or zero), not from y
};

template <int kTiles, int kRows>
void micro_kernel(const MicroArgs& m) {
  __m512 acc[kRows][kTiles];
#pragma GCC unroll 8
  for (int t = 0; t < kTiles; ++t) {
    const __m512 init =
        m.first && m.bias ? _mm512_maskz_loadu_ps(m.masks[t], m.bias + t * kTileRows) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) {
      acc[j][t] = m.first ? init : _mm512_maskz_loadu_ps(m.masks[t], m.y + j * m.y_stride + t * kTileRows);
    }
  }
  const std::uint8_t* w = m.tiles;
  const std::uint32_t* x = m.pairs;
  for (std::size_t p = 0; p < m.pair_count; ++p) {
    __m512bh wp[kTiles];
#pragma GCC unroll 8
    for (int t = 0; t < kTiles; ++t) wp[t] = (__m512bh)_mm512_loadu_si512(w + t * m.tile_stride + p * 64);
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) {
      const __m512bh xp = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[j * kBlockPairs + p]));
#pragma GCC unroll 8
      for (int t = 0; t < kTiles; ++t) acc[j][t] = _mm512_dpbf16_ps(acc[j][t], wp[t], xp);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) {
#pragma GCC unroll 8
    for (int t = 0; t < kTiles; ++t) {
      _mm512_mask_storeu_ps(m.y + j * m.y_stride + t * kTileRows, m.masks[t], acc[j][t]);
    }
  }
}

using MicroKernel = void (*)(const MicroArgs&);

template <int kTiles, std::size_t... kRowsMinusOne>
constexpr std::array<MicroKernel, kMaxRows> kernels_for_tiles(std::index_sequence<kRowsMinusOne...>) {
  return {micro_kernel<kTiles, static_cast<int>(kRowsMinusOne) + 1>...};
}

// kMicroKernels[tiles - 1][rows - 1]
constexpr std::array<std::array<MicroKernel, kMaxRows>, kMaxTiles> kMicroKernels = {
    kernels_for_tiles<1>(std::make_index_sequence<kMaxRows>()),
    kernels_for_tiles<2>(std::make_index_sequence<kMaxRows>()),
    kernels_for_tiles<3>(std::make_index_sequence<kMaxRows>()),
    kernels_for_tiles<4>(std::make_index_sequence<kMaxRows>())};

// Rows [i0, i0 + rows) of x, already converted for the k-block starting at k0, times every tile
// in [t_begin, t_end).
void multiply_block(const PackedWeights& w, const MatmulArgs& a, const std::uint32_t (*pairs)[kBlockPairs],
                    std::size_t i0, std::size_t rows, std::size_t k0, std::size_t pair_count, std::size_t t_begin,
                    std::size_t t_end, std::size_t row_begin, std::size_t row_end) {
  const std::size_t tile_stride = w.layout.k_padded * 32;
  for (std::size_t t = t_begin; t < t_end; t += kMaxTiles) {
    const std::size_t tiles = std::min<std::size_t>(kMaxTiles, t_end - t);
    __mmask16 masks[kMaxTiles];
    for (std::size_t u = 0; u < tiles; ++u) masks[u] = row_mask(t + u, row_begin, row_end);
    MicroArgs m{w.data() + t * tile_stride + k0 * 32,      tile_stride, nullptr, pair_count, nullptr, a.y_stride, masks,
                a.bias ? a.bias + t * kTileRows : nullptr, k0 == 0};
    for (std::size_t j = 0; j < rows; j += kMaxRows) {
      const std::size_t r = std::min<std::size_t>(kMaxRows, rows - j);
      m.pairs = pairs[j];
      m.y = a.y + (i0 + j) * a.y_stride + t * kTileRows;
      kMicroKernels[tiles - 1][r - 1](m);
    }
  }
}

void matmul_bf16(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const std::size_t in = w.layout.in;
  const std::size_t t_begin = row_begin / kTileRows, t_end = (row_end + kTileRows - 1) / kTileRows;
  alignas(64) std::uint32_t pairs[kBlockRows][kBlockPairs];  // [rows of the block][pairs of the k-block]
  for (std::size_t k0 = 0; k0 < in; k0 += kBlockColumns) {
    const std::size_t k_end = std::min(k0 + kBlockColumns, in);
    const std::size_t count = (k_end - k0 + 31) / 32 * 32;
    for (std::size_t i0 = 0; i0 < a.n; i0 += kBlockRows) {
      const std::size_t rows = std::min(kBlockRows, a.n - i0);
      for (std::size_t j = 0; j < rows; ++j) {
        const std::size_t next = j + kPrefetchRows < rows ? i0 + j + kPrefetchRows : a.n;
        convert_pairs(a.x + (i0 + j) * in, k0, count, in, pairs[j], next < a.n ? a.x + next * in : nullptr);
      }
      multiply_block(w, a, pairs, i0, rows, k0, (k_end - k0 + 1) / 2, t_begin, t_end, row_begin, row_end);
    }
  }
}

}  // namespace

void register_bf16_kernels(MatmulTable& table) {
  table.f32[scheme_index(WeightScheme::kBf16)] = {matmul_bf16, matmul_bf16};
}

}  // namespace kiln::kernels::avx512
