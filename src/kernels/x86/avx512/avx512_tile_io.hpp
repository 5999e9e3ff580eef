// Loads and stores shared by the AVX-512 matmul kernels: one 16-row tile's scales, zero points
// and outputs. Include only from translation units built with the avx512 flags.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kiln::kernels::avx512 {

inline constexpr std::size_t kTileRows = 16;

// The lanes of tile `tile` whose rows fall in [row_begin, row_end).
inline __mmask16 row_mask(std::size_t tile, std::size_t row_begin, std::size_t row_end) {
  const std::size_t base = tile * kTileRows;
  const unsigned lo = static_cast<unsigned>(std::max(row_begin, base) - base);
  const unsigned hi = static_cast<unsigned>(std::min(row_end, base + kTileRows) - base);
  return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// y_row[tile rows in mask] = acc (+ bias). Masked lanes are neither read nor written.
inline void store_tile(float* y_row, std::size_t tile, __mmask16 mask, __m512 acc, const float* bias) {
  if (bias) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(mask, bias + tile * kTileRows));
  _mm512_mask_storeu_ps(y_row + tile * kTileRows, mask, acc);
}

// 16 f16 scales -> f32.
inline __m512 load_scales(const std::uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// 16 u8 zero points -> i32.
inline __m512i load_zero_points(const std::uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Broadcasts the 4 activation codes at p to every 32-bit lane (the VNNI "A" operand).
inline __m512i broadcast4(const std::int8_t* p) {
  std::int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

}  // namespace kiln::kernels::avx512
