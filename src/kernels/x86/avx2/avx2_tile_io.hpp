// Loads and stores shared by the AVX2 matmul kernels: one 8-row tile's scales, zero points and
// outputs. Include only from translation units built with the avx2 flags.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kiln::kernels::avx2 {

inline constexpr std::size_t kTileRows = 8;

// All-ones lanes for the rows of tile `tile` inside [row_begin, row_end).
inline __m256i row_mask(std::size_t tile, std::size_t row_begin, std::size_t row_end) {
  const std::size_t base = tile * kTileRows;
  const int lo = static_cast<int>(std::max(row_begin, base) - base);
  const int hi = static_cast<int>(std::min(row_end, base + kTileRows) - base);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane),
                          _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(lo - 1)));
}

inline __m256 load_rows(const float* p, __m256i mask) { return _mm256_maskload_ps(p, mask); }

// y_row[tile rows in mask] = acc (+ bias). Masked lanes are neither read nor written.
inline void store_tile(float* y_row, std::size_t tile, __m256i mask, __m256 acc, const float* bias) {
  if (bias) acc = _mm256_add_ps(acc, _mm256_maskload_ps(bias + tile * kTileRows, mask));
  _mm256_maskstore_ps(y_row + tile * kTileRows, mask, acc);
}

// 8 f16 scales -> f32.
inline __m256 load_scales(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 8 u8 zero points -> i32.
inline __m256i load_zero_points(const std::uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

inline __m256i broadcast4(const std::int8_t* p) {
  std::int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

}  // namespace kiln::kernels::avx2
