// The stripe-hash loop with one zmm register per stripe.
#include <immintrin.h>

#include "kernels/stripe_hash.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"

namespace kiln::kernels::avx512 {

void accumulate_stripes(std::uint64_t* lanes, const std::uint8_t* p, std::size_t stripes, std::size_t index) {
  __m512i acc = _mm512_loadu_si512(lanes);
  const __m512i keys = _mm512_load_si512(kStripeLaneKeys);
  const __m512i scramble_keys = _mm512_load_si512(kStripeScrambleKeys);
  const __m512i prime = _mm512_set1_epi64(kScramblePrime);
  for (std::size_t s = 0; s < stripes; ++s, p += kStripeBytes) {
    const __m512i d = _mm512_loadu_si512(p);
    const __m512i k = _mm512_xor_si512(d, keys);
    const __m512i product = _mm512_mul_epu32(k, _mm512_shuffle_epi32(k, _MM_PERM_CDAB));  // lo32 * hi32
    const __m512i neighbour = _mm512_shuffle_epi32(d, _MM_PERM_BADC);                     // d[j ^ 1]
    acc = _mm512_add_epi64(acc, _mm512_add_epi64(product, neighbour));
    if ((index + s + 1) % kStripesPerScramble == 0) {
      const __m512i x = _mm512_xor_si512(_mm512_xor_si512(acc, _mm512_srli_epi64(acc, 47)), scramble_keys);
      // x * prime mod 2^64 with a 32-bit prime: lo32(x) * p + (hi32(x) * p << 32).
      acc = _mm512_add_epi64(_mm512_mul_epu32(x, prime),
                             _mm512_slli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(x, 32), prime), 32));
    }
  }
  _mm512_storeu_si512(lanes, acc);
}

}  // namespace kiln::kernels::avx512
