// The stripe-hash loop with two ymm registers per stripe (lanes 0-3 and 4-7); d[j ^ 1] stays
// within a 128-bit half.
#include <immintrin.h>

#include "kernels/stripe_hash.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"

namespace kiln::kernels::avx2 {

void accumulate_stripes(std::uint64_t* lanes, const std::uint8_t* p, std::size_t stripes, std::size_t index) {
  __m256i acc[2], keys[2], scramble_keys[2];
  for (int h = 0; h < 2; ++h) {
    acc[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes + 4 * h));
    keys[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(kStripeLaneKeys + 4 * h));
    scramble_keys[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(kStripeScrambleKeys + 4 * h));
  }
  const __m256i prime = _mm256_set1_epi64x(kScramblePrime);
  for (std::size_t s = 0; s < stripes; ++s, p += kStripeBytes) {
    const bool scramble = (index + s + 1) % kStripesPerScramble == 0;
    for (int h = 0; h < 2; ++h) {
      const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * h));
      const __m256i k = _mm256_xor_si256(d, keys[h]);
      const __m256i product = _mm256_mul_epu32(k, _mm256_shuffle_epi32(k, 0xB1));  // lo32 * hi32
      const __m256i neighbour = _mm256_shuffle_epi32(d, 0x4E);                     // d[j ^ 1]
      acc[h] = _mm256_add_epi64(acc[h], _mm256_add_epi64(product, neighbour));
      if (scramble) {
        const __m256i x = _mm256_xor_si256(_mm256_xor_si256(acc[h], _mm256_srli_epi64(acc[h], 47)), scramble_keys[h]);
        acc[h] = _mm256_add_epi64(_mm256_mul_epu32(x, prime),
                                  _mm256_slli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), prime), 32));
      }
    }
  }
  for (int h = 0; h < 2; ++h) _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + 4 * h), acc[h]);
}

}  // namespace kiln::kernels::avx2
