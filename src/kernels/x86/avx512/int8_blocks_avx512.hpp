// The integer block arithmetic shared by the AVX-512 VNNI GEMV (decode) and GEMM (prefill)
// kernels: block geometry, activation chunk sums, the exact zero-point correction and the
// unpack-and-dot of one weight tile. Include only from translation units built with the avx512
// flags.
#pragma once

#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx512/avx512_tile_io.hpp"

namespace kiln::kernels::avx512 {

// The next weight tiles, read into L2 a few lines per block while the current ones are computed:
// a GEMM over many rows would otherwise stream each tile from DRAM at its full speed (~8 bytes
// per cycle) in its first pass and read none in the others.
struct Prefetch {
  const std::uint8_t* next;  // next line to fetch
  const std::uint8_t* end;
  std::size_t lines_per_block;  // 0: none in this pass

  void step() {
    for (std::size_t i = 0; i < lines_per_block && next < end; ++i, next += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(next), _MM_HINT_T1);
    }
  }
};

// Geometry of one call, computed once.
struct Int8Shape {
  std::size_t block;       // columns per integer block
  std::size_t in_rounded;  // in rounded up to 32: blocks end here at the latest
  std::size_t tile_bytes;  // packed bytes per 16-row tile
};

template <bool kInt4>
inline Int8Shape int8_shape(const PackedLayout& l, const QuantizedActivations& xq) {
  return Int8Shape{int8_block_columns(l, xq.group_size), (l.in + 31) / 32 * 32, l.k_padded * (kInt4 ? 8 : 16)};
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
inline __m512i dot_block(const std::uint8_t* tile, const std::int8_t* q, std::size_t k0, std::size_t k1) {
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

}  // namespace kiln::kernels::avx512
