#include "runtime/content_hash.hpp"

#include <bit>
#include <cstring>
#include <vector>

#include "kernels/reference/stripe_hash.hpp"
#include "kernels/stripe_hash.hpp"
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

constexpr std::uint64_t kLaneStart[8] = {kPrime3, kPrime1,           kPrime2,           kPrime4,
                                         kPrime5, kPrime1 ^ kPrime2, kPrime3 ^ kPrime4, kPrime5 ^ kPrime1};

std::uint64_t stripe_hash_with(std::span<const std::uint8_t> bytes, kernels::StripeAccumulateFn accumulate) {
  std::uint64_t acc[8];
  std::memcpy(acc, kLaneStart, sizeof acc);
  const std::size_t full = bytes.size() / kernels::kStripeBytes;
  accumulate(acc, bytes.data(), full, 0);
  const std::size_t tail = bytes.size() - full * kernels::kStripeBytes;
  if (tail > 0) {
    alignas(64) std::uint8_t last[kernels::kStripeBytes] = {};
    std::memcpy(last, bytes.data() + full * kernels::kStripeBytes, tail);
    kernels::reference::accumulate_stripes(acc, last, 1, full);
  }
  return hash64({reinterpret_cast<const std::uint8_t*>(acc), sizeof acc}, bytes.size());
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

std::uint64_t stripe_hash64(std::span<const std::uint8_t> bytes, Isa isa) {
  return stripe_hash_with(bytes, kernels::find_stripe_accumulate(isa));
}

std::uint64_t chunked_hash64(std::span<const std::uint8_t> bytes, ThreadPool& pool, Isa isa) {
  const std::size_t chunks = (bytes.size() + kChunkBytes - 1) / kChunkBytes;
  std::vector<std::uint64_t> hashes(chunks + 1);  // [chunks], then the total length
  pool.parallel_for(chunks, [&](std::size_t c, std::size_t) {
    hashes[c] =
        stripe_hash64(bytes.subspan(c * kChunkBytes, std::min(kChunkBytes, bytes.size() - c * kChunkBytes)), isa);
  });
  hashes[chunks] = bytes.size();
  return hash64({reinterpret_cast<const std::uint8_t*>(hashes.data()), hashes.size() * 8});
}

}  // namespace kiln::runtime
