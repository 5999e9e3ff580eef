#include "kernels/reference/stripe_hash.hpp"

#include <cstring>

namespace kiln::kernels::reference {
namespace {

std::uint64_t read64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

void accumulate_stripes(std::uint64_t* acc, const std::uint8_t* p, std::size_t stripes, std::size_t index) {
  for (std::size_t s = 0; s < stripes; ++s, p += kStripeBytes) {
    std::uint64_t d[8];
    for (int j = 0; j < 8; ++j) d[j] = read64(p + 8 * j);
    for (int j = 0; j < 8; ++j) {
      const std::uint64_t k = d[j] ^ kStripeLaneKeys[j];
      acc[j] += (k & 0xFFFFFFFFu) * (k >> 32) + d[j ^ 1];
    }
    if ((index + s + 1) % kStripesPerScramble == 0) {
      for (int j = 0; j < 8; ++j) acc[j] = ((acc[j] ^ (acc[j] >> 47)) ^ kStripeScrambleKeys[j]) * kScramblePrime;
    }
  }
}

}  // namespace kiln::kernels::reference
