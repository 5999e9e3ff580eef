// AVX2 dynamic activation quantisation; bit-identical to quantize_activations_reference (the
// same f32 operations: |x| max, 127 / absmax, x * inverse rounded half to even). Each group's
// columns past the last full 32 go through the same scalar formula.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/x86/avx2/avx2_kernels.hpp"

namespace kiln::kernels::avx2 {
namespace {

float group_absmax(const float* x, std::size_t begin, std::size_t end) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 m = _mm256_setzero_ps();
  std::size_t k = begin;
  for (; k + 8 <= end; k += 8) m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(x + k), magnitude));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float absmax = 0.0f;
  for (float v : lanes) absmax = absmax > v ? absmax : v;
  for (; k < end; ++k) absmax = absmax > std::fabs(x[k]) ? absmax : std::fabs(x[k]);
  return absmax;
}

// 32 codes from x[0..32) * inverse, in column order.
void quantize32(const float* x, __m256 inverse, std::int8_t* codes) {
  const __m256i c0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), inverse));
  const __m256i c1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), inverse));
  const __m256i c2 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), inverse));
  const __m256i c3 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), inverse));
  // packs work within 128-bit lanes: the permute restores column order.
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(c0, c1), _mm256_packs_epi32(c2, c3));
  const __m256i ordered = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes), ordered);
}

}  // namespace

void quantize_activations(const float* x, const QuantizedActivations& q, std::size_t row_begin, std::size_t row_end) {
  for (std::size_t i = row_begin; i < row_end; ++i) {
    const float* xi = x + i * q.in;
    std::int8_t* codes = q.codes + i * q.row_stride;
    for (std::size_t h = 0; h < q.groups; ++h) {
      const std::size_t begin = h * q.group_size;
      const std::size_t end = begin + q.group_size < q.in ? begin + q.group_size : q.in;
      const float absmax = group_absmax(xi, begin, end);
      const float inverse = absmax > 0.0f ? 127.0f / absmax : 0.0f;
      q.scales[i * q.groups + h] = absmax / 127.0f;
      std::size_t k = begin;
      for (; k + 32 <= end; k += 32) quantize32(xi + k, _mm256_set1_ps(inverse), codes + k);
      for (; k < end; ++k) codes[k] = static_cast<std::int8_t>(std::nearbyint(xi[k] * inverse));
    }
    std::memset(codes + q.in, 0, q.row_stride - q.in);
    for (std::size_t c = 0; c < q.chunks; ++c) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + c * kActivationChunk));
      // Σ of 32 signed bytes: widen to 16 bits (multiply by 1 pairs) then to 32 bits.
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), v);
      const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
      alignas(32) std::int32_t lanes[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), quads);
      q.chunk_sums[i * q.chunks + c] =
          lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
    }
  }
}

}  // namespace kiln::kernels::avx2
