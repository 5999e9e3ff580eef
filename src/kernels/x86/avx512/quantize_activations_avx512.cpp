// AVX-512 dynamic activation quantisation; bit-identical to quantize_activations_reference
// (the same f32 operations: |x| max, 127 / absmax, x * inverse rounded half to even).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/avx512/avx512_kernels.hpp"

namespace kiln::kernels::avx512 {
namespace {

__mmask16 lanes_below(std::size_t k, std::size_t end) {
  return end - k >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (end - k)) - 1u);
}

void quantize_row(const float* x, std::int8_t* codes, float* scales, const QuantizedActivations& q) {
  for (std::size_t h = 0; h < q.groups; ++h) {
    const std::size_t begin = h * q.group_size;
    const std::size_t end = std::min(begin + q.group_size, q.in);
    __m512 absmax = _mm512_setzero_ps();
    for (std::size_t k = begin; k < end; k += 16) {
      absmax = _mm512_max_ps(absmax, _mm512_abs_ps(_mm512_maskz_loadu_ps(lanes_below(k, end), x + k)));
    }
    const float m = _mm512_reduce_max_ps(absmax);
    const float inverse = m > 0.0f ? 127.0f / m : 0.0f;
    scales[h] = m / 127.0f;
    const __m512 inv = _mm512_set1_ps(inverse);
    for (std::size_t k = begin; k < end; k += 16) {
      const __mmask16 lanes = lanes_below(k, end);
      const __m512i c = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, x + k), inv));
      _mm_mask_storeu_epi8(codes + k, lanes, _mm512_cvtsepi32_epi8(c));
    }
  }
}

}  // namespace

void quantize_activations(const float* x, const QuantizedActivations& q, std::size_t row_begin, std::size_t row_end) {
  for (std::size_t i = row_begin; i < row_end; ++i) {
    std::int8_t* codes = q.codes + i * q.row_stride;
    quantize_row(x + i * q.in, codes, q.scales + i * q.groups, q);
    std::memset(codes + q.in, 0, q.row_stride - q.in);
    for (std::size_t c = 0; c < q.chunks; ++c) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + c * kActivationChunk));
      q.chunk_sums[i * q.chunks + c] = _mm512_reduce_add_epi32(_mm512_add_epi32(
          _mm512_cvtepi8_epi32(_mm256_castsi256_si128(v)), _mm512_cvtepi8_epi32(_mm256_extracti128_si256(v, 1))));
    }
  }
}

}  // namespace kiln::kernels::avx512
