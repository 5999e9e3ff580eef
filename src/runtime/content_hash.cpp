#include "runtime/content_hash.hpp"

#include <immintrin.h>

#include <bit>
#include <cstring>
#include <vector>

#include "runtime/thread_pool.hpp"

namespace kiln::runtime {
namespace {

constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;
constexpr std::uint64_t kPrime5 = 0x27D4EB2F165667C5ull;
constexpr std::size_t kChunkBytes = std::size_t{4} << 20;

std::uint64_t read64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::uint64_t round(std::uint64_t acc, std::uint64_t input) { return std::rotl(acc + input * kPrime2, 31) * kPrime1; }

std::uint64_t merge(std::uint64_t acc, std::uint64_t lane) { return (acc ^ round(0, lane)) * kPrime1 + kPrime4; }

// stripe_hash64: 64-byte stripes, lanes scrambled after every 16th stripe.
constexpr std::size_t kStripeBytes = 64;
constexpr std::size_t kStripesPerScramble = 16;
constexpr std::uint64_t kScramblePrime = 0x9E3779B1u;  // a 32-bit prime: one vpmuludq pair
alignas(64) constexpr std::uint64_t kLaneKeys[8] = {0xbe4ba423396cfeb8ull, 0x1cad21f72c81017cull, 0xdb979083e96dd4deull,
                                                    0x1f67b3b7a4a44072ull, 0x78e5c0cc4ee679cbull, 0x2172ffcc7dd05a82ull,
                                                    0x8e2443f7744608b8ull, 0x4c263a81e69035e0ull};
alignas(64) constexpr std::uint64_t kScrambleKeys[8] = {
    0xc8b7a2a8a71c9d03ull, 0x5b4c2a9d0c4b7c11ull, 0x3f1d8e7a6b5c4d3eull, 0xa7e2f1c3d5b60819ull,
    0x0d9c8b7a69584736ull, 0xf0e1d2c3b4a59687ull, 0x6a5b4c3d2e1f0a9bull, 0x91827364554637a8ull};
constexpr std::uint64_t kLaneStart[8] = {kPrime3, kPrime1,           kPrime2,           kPrime4,
                                         kPrime5, kPrime1 ^ kPrime2, kPrime3 ^ kPrime4, kPrime5 ^ kPrime1};

using Lanes = std::uint64_t[8];

// Stripes [0, stripes) of p, the first being stripe number `index` of the input.
void accumulate_scalar(Lanes acc, const std::uint8_t* p, std::size_t stripes, std::size_t index) {
  for (std::size_t s = 0; s < stripes; ++s, p += kStripeBytes) {
    std::uint64_t d[8];
    for (int j = 0; j < 8; ++j) d[j] = read64(p + 8 * j);
    for (int j = 0; j < 8; ++j) {
      const std::uint64_t k = d[j] ^ kLaneKeys[j];
      acc[j] += (k & 0xFFFFFFFFu) * (k >> 32) + d[j ^ 1];
    }
    if ((index + s + 1) % kStripesPerScramble == 0) {
      for (int j = 0; j < 8; ++j) acc[j] = ((acc[j] ^ (acc[j] >> 47)) ^ kScrambleKeys[j]) * kScramblePrime;
    }
  }
}

// The same with one zmm register per stripe. (GCC 12 flags the intrinsics' own "undefined"
// pass-through operands as maybe-uninitialised when a target attribute, not -mavx512f, enables them.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) void accumulate_avx512(Lanes lanes, const std::uint8_t* p, std::size_t stripes,
                                                          std::size_t index) {
  __m512i acc = _mm512_loadu_si512(lanes);
  const __m512i keys = _mm512_load_si512(kLaneKeys);
  const __m512i scramble_keys = _mm512_load_si512(kScrambleKeys);
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
#pragma GCC diagnostic pop

// The same with two ymm registers per stripe (lanes 0-3 and 4-7); d[j ^ 1] stays within a
// 128-bit half.
__attribute__((target("avx2"))) void accumulate_avx2(Lanes lanes, const std::uint8_t* p, std::size_t stripes,
                                                     std::size_t index) {
  __m256i acc[2], keys[2], scramble_keys[2];
  for (int h = 0; h < 2; ++h) {
    acc[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes + 4 * h));
    keys[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(kLaneKeys + 4 * h));
    scramble_keys[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(kScrambleKeys + 4 * h));
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

using AccumulateFn = void (*)(Lanes, const std::uint8_t*, std::size_t, std::size_t);

std::uint64_t stripe_hash_with(std::span<const std::uint8_t> bytes, AccumulateFn accumulate) {
  Lanes acc;
  std::memcpy(acc, kLaneStart, sizeof acc);
  const std::size_t full = bytes.size() / kStripeBytes;
  accumulate(acc, bytes.data(), full, 0);
  const std::size_t tail = bytes.size() - full * kStripeBytes;
  if (tail > 0) {
    alignas(64) std::uint8_t last[kStripeBytes] = {};
    std::memcpy(last, bytes.data() + full * kStripeBytes, tail);
    accumulate_scalar(acc, last, 1, full);
  }
  return hash64({reinterpret_cast<const std::uint8_t*>(acc), sizeof acc}, bytes.size());
}

AccumulateFn accumulate_for(StripeHashPath path) {
  switch (path) {
    case StripeHashPath::kAvx512: return accumulate_avx512;
    case StripeHashPath::kAvx2: return accumulate_avx2;
    case StripeHashPath::kScalar: break;
  }
  return accumulate_scalar;
}

AccumulateFn best_accumulate() {
  static const AccumulateFn fn =
      accumulate_for(stripe_hash_path_supported(StripeHashPath::kAvx512) ? StripeHashPath::kAvx512
                     : stripe_hash_path_supported(StripeHashPath::kAvx2) ? StripeHashPath::kAvx2
                                                                         : StripeHashPath::kScalar);
  return fn;
}

}  // namespace

std::uint64_t hash64(std::span<const std::uint8_t> bytes, std::uint64_t seed) {
  const std::uint8_t* p = bytes.data();
  const std::uint8_t* end = p + bytes.size();
  std::uint64_t h;
  if (bytes.size() >= 32) {
    std::uint64_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
    for (; p + 32 <= end; p += 32) {
      v1 = round(v1, read64(p));
      v2 = round(v2, read64(p + 8));
      v3 = round(v3, read64(p + 16));
      v4 = round(v4, read64(p + 24));
    }
    h = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
    h = merge(merge(merge(merge(h, v1), v2), v3), v4);
  } else {
    h = seed + kPrime5;
  }
  h += bytes.size();
  for (; p + 8 <= end; p += 8) h = std::rotl(h ^ round(0, read64(p)), 27) * kPrime1 + kPrime4;
  for (; p < end; ++p) h = std::rotl(h ^ (*p * kPrime5), 11) * kPrime1;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  return h ^ (h >> 32);
}

std::uint64_t stripe_hash64(std::span<const std::uint8_t> bytes) { return stripe_hash_with(bytes, best_accumulate()); }

bool stripe_hash_path_supported(StripeHashPath path) {
  switch (path) {
    case StripeHashPath::kAvx512: return __builtin_cpu_supports("avx512f");
    case StripeHashPath::kAvx2: return __builtin_cpu_supports("avx2");
    case StripeHashPath::kScalar: break;
  }
  return true;
}

std::uint64_t stripe_hash64(std::span<const std::uint8_t> bytes, StripeHashPath path) {
  return stripe_hash_with(bytes, accumulate_for(path));
}

std::uint64_t chunked_hash64(std::span<const std::uint8_t> bytes, ThreadPool& pool) {
  const std::size_t chunks = (bytes.size() + kChunkBytes - 1) / kChunkBytes;
  std::vector<std::uint64_t> hashes(chunks + 1);  // [chunks], then the total length
  pool.parallel_for(chunks, [&](std::size_t c, std::size_t) {
    hashes[c] = stripe_hash64(bytes.subspan(c * kChunkBytes, std::min(kChunkBytes, bytes.size() - c * kChunkBytes)));
  });
  hashes[chunks] = bytes.size();
  return hash64({reinterpret_cast<const std::uint8_t*>(hashes.data()), hashes.size() * 8});
}

}  // namespace kiln::runtime
