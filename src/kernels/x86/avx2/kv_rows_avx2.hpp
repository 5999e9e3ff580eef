// AVX2 reads of paged K/V rows shared by the attention translation units (attend and
// attend_rows): 8-lane loads that decode any stored element to f32 (row addresses:
// kv_row_address.hpp). Internal linkage only (static inline), as in vector_math_avx2.hpp.
#pragma once

#include <immintrin.h>

#include "kernels/paged_attention.hpp"
#include "kernels/x86/avx2/vector_math_avx2.hpp"
#include "kernels/x86/kv_row_address.hpp"

namespace kiln::kernels::avx2_kv {

namespace vm = avx2_math;

using kv_rows::bytes_per_element;
using kv_rows::row_address;
using kv_rows::RowAddress;

// 8 elements of a stored row from element i on, as f32, from exactly 8 readable elements.
template <ElementType E>
static inline __m256 load8_full(const std::uint8_t* p, long i, const float* params, long group_size) {
  if constexpr (E == ElementType::kF32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  } else if constexpr (E == ElementType::kF16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else if constexpr (E == ElementType::kBf16) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  } else {
    const float* g = params + (i / group_size) * 2;
    const __m256 codes = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
    return _mm256_fmadd_ps(codes, _mm256_set1_ps(g[0]), _mm256_set1_ps(g[1]));
  }
}

// The same for `left` (< 8 possible) remaining elements; the other lanes decode zero codes.
template <ElementType E>
static inline __m256 load8(const std::uint8_t* row, long i, long left, const float* params, long group_size) {
  constexpr long kBytes = bytes_per_element(E);
  const std::uint8_t* p = row + i * kBytes;
  if (left >= 8) return load8_full<E>(p, i, params, group_size);
  alignas(32) std::uint8_t padded[32] = {};
  for (long b = 0; b < left * kBytes; ++b) padded[b] = p[b];
  return load8_full<E>(padded, i, params, group_size);
}

static inline __m256 load_floats(const float* x, long left) {
  return left >= 8 ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, vm::first_lanes(left));
}

static inline void store_floats(float* x, long left, __m256 v) {
  if (left >= 8) {
    _mm256_storeu_ps(x, v);
  } else {
    _mm256_maskstore_ps(x, vm::first_lanes(left), v);
  }
}

}  // namespace kiln::kernels::avx2_kv
