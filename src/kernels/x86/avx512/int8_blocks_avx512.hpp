// The integer block arithmetic shared by the AVX-512 VNNI GEMV (decode) and GEMM (prefill)
// kernels: block geometry, activation chunk sums, the next tiles' prefetch and the pin that
// keeps an accumulator in its register. Include only from translation units built with the
// avx512 flags.
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

// Keeps an accumulator in the register it was given: without this GCC 12 rotates the
// loop-carried dot products through a second set of registers, one vmovdqa per vpdpbusd
// (the 64-row GEMM ran 6-10% slower on Zen 4).
[[gnu::always_inline]] inline void keep_in_register(__m512i& v) { asm("" : "+v"(v)); }

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

}  // namespace kiln::kernels::avx512
