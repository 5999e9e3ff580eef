#include "kv/block_hash.hpp"

namespace kiln::kv {
namespace {

// splitmix64's finaliser: every input bit affects every output bit.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t hash_block(std::uint64_t parent, std::span<const std::int32_t> tokens) {
  std::uint64_t h = mix(parent ^ 0x9e3779b97f4a7c15ULL);
  for (std::int32_t t : tokens) h = mix(h ^ static_cast<std::uint32_t>(t)) + 0x9e3779b97f4a7c15ULL;
  return mix(h ^ tokens.size());
}

}  // namespace kiln::kv
