// AVX-512 BF16 kernels for bf16 weights: one vdpbf16ps multiplies a 16-row × 2-column bf16
// slice by a broadcast pair of activations (rounded to bf16 with vcvtne2ps2bf16, RNE like
// f32_to_bf16) and adds both products into 16 f32 lanes.
// NOTE: the bf16 conversion treats f32 subnormal inputs as zero; activations that small (below
// 1.2e-38) do not occur in a transformer's hidden states.
#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx512/avx512_tile_io.hpp"
#include "kernels/x86/avx512/matmul_avx512.hpp"

namespace kiln::kernels::avx512 {
namespace {

constexpr std::size_t kBlockColumns = 512;
constexpr int kRowsPerPass = 8;

// pairs[p] = bf16(x[k0 + 2p]) | bf16(x[k0 + 2p + 1]) << 16 for columns [k0, k0 + count), zero
// beyond `in`.
void convert_pairs(const float* x, std::size_t k0, std::size_t count, std::size_t in,
                   std::uint32_t* pairs) {
  for (std::size_t k = k0; k < k0 + count; k += 32) {
    const auto lanes = [&](std::size_t from) -> __mmask16 {
      if (from >= in) return 0;
      return in - from >= 16 ? static_cast<__mmask16>(0xFFFF)
                             : static_cast<__mmask16>((1u << (in - from)) - 1u);
    };
    const __m512 lo = _mm512_maskz_loadu_ps(lanes(k), x + k);
    const __m512 hi = _mm512_maskz_loadu_ps(lanes(k + 16), x + k + 16);
    const __m512bh packed = _mm512_cvtne2ps_pbh(hi, lo);
    _mm512_storeu_si512(pairs + (k - k0) / 2, (__m512i)packed);
  }
}

template <int kRows>
void bf16_rows(const PackedWeights& w, const MatmulArgs& a, std::size_t i0, std::size_t t,
               std::size_t k0, std::size_t k_end, bool first, __mmask16 mask) {
  const std::size_t in = w.layout.in;
  const std::size_t count = (k_end - k0 + 31) / 32 * 32;
  alignas(64) std::uint32_t pairs[kRows][kBlockColumns / 2];
  constexpr int kSplit = kRows == 1 ? 4 : kRows < 4 ? 2 : 1;  // hide vdpbf16ps latency
  __m512 acc[kRows][kSplit];
  const __m512 init = first && a.bias ? _mm512_maskz_loadu_ps(mask, a.bias + t * kTileRows)
                                      : _mm512_setzero_ps();
  for (int j = 0; j < kRows; ++j) {
    convert_pairs(a.x + (i0 + j) * in, k0, count, in, pairs[j]);
    acc[j][0] = first ? init : _mm512_maskz_loadu_ps(mask, a.y + (i0 + j) * a.y_stride + t * kTileRows);
    for (int s = 1; s < kSplit; ++s) acc[j][s] = _mm512_setzero_ps();
  }
  const std::uint8_t* tile = w.data() + t * w.layout.k_padded * 32 + k0 * 32;
  const std::size_t pair_count = (k_end - k0 + 1) / 2;
  std::size_t p = 0;
  for (; p + kSplit <= pair_count; p += kSplit) {
#pragma GCC unroll 4
    for (int s = 0; s < kSplit; ++s) {
      const __m512bh wp = (__m512bh)_mm512_loadu_si512(tile + (p + s) * 64);
#pragma GCC unroll 8
      for (int j = 0; j < kRows; ++j) {
        const __m512bh xp = (__m512bh)_mm512_set1_epi32(static_cast<int>(pairs[j][p + s]));
        acc[j][s] = _mm512_dpbf16_ps(acc[j][s], wp, xp);
      }
    }
  }
  for (; p < pair_count; ++p) {
    const __m512bh wp = (__m512bh)_mm512_loadu_si512(tile + p * 64);
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) {
      acc[j][0] = _mm512_dpbf16_ps(acc[j][0], wp, (__m512bh)_mm512_set1_epi32(static_cast<int>(pairs[j][p])));
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) {
    for (int s = 1; s < kSplit; ++s) acc[j][0] = _mm512_add_ps(acc[j][0], acc[j][s]);
    _mm512_mask_storeu_ps(a.y + (i0 + j) * a.y_stride + t * kTileRows, mask, acc[j][0]);
  }
}

void matmul_bf16(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin,
                 std::size_t row_end) {
  const std::size_t in = w.layout.in;
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
    const __mmask16 mask = row_mask(t, row_begin, row_end);
    for (std::size_t k0 = 0; k0 < in; k0 += kBlockColumns) {
      const std::size_t k_end = std::min(k0 + kBlockColumns, in);
      const bool first = k0 == 0;
      std::size_t i = 0;
      for (; i + kRowsPerPass <= a.n; i += kRowsPerPass) {
        bf16_rows<kRowsPerPass>(w, a, i, t, k0, k_end, first, mask);
      }
      switch (a.n - i) {
        case 7: bf16_rows<7>(w, a, i, t, k0, k_end, first, mask); break;
        case 6: bf16_rows<6>(w, a, i, t, k0, k_end, first, mask); break;
        case 5: bf16_rows<5>(w, a, i, t, k0, k_end, first, mask); break;
        case 4: bf16_rows<4>(w, a, i, t, k0, k_end, first, mask); break;
        case 3: bf16_rows<3>(w, a, i, t, k0, k_end, first, mask); break;
        case 2: bf16_rows<2>(w, a, i, t, k0, k_end, first, mask); break;
        case 1: bf16_rows<1>(w, a, i, t, k0, k_end, first, mask); break;
        default: break;
      }
    }
  }
}

}  // namespace

void register_bf16_kernels(MatmulTable& table) {
  table.f32[scheme_index(WeightScheme::kBf16)] = {matmul_bf16, matmul_bf16};
}

}  // namespace kiln::kernels::avx512
