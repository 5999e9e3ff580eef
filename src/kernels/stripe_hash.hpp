// The bulk loop of the compile cache's content hash (runtime/content_hash.hpp): eight 64-bit lanes
// over 64-byte stripes, each lane adding lo32(d ^ key) * hi32(d ^ key) and its neighbour's raw
// word d, the lanes scrambled after every 16th stripe. The scalar loop (reference/stripe_hash.cpp)
// is the definition; the AVX2 and AVX-512 loops give the same lanes bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu_isa.hpp"

namespace kiln::kernels {

inline constexpr std::size_t kStripeBytes = 64;
inline constexpr std::size_t kStripesPerScramble = 16;
inline constexpr std::uint64_t kScramblePrime = 0x9E3779B1u;  // a 32-bit prime: one vpmuludq pair
alignas(64) inline constexpr std::uint64_t kStripeLaneKeys[8] = {
    0xbe4ba423396cfeb8ull, 0x1cad21f72c81017cull, 0xdb979083e96dd4deull, 0x1f67b3b7a4a44072ull,
    0x78e5c0cc4ee679cbull, 0x2172ffcc7dd05a82ull, 0x8e2443f7744608b8ull, 0x4c263a81e69035e0ull};
alignas(64) inline constexpr std::uint64_t kStripeScrambleKeys[8] = {
    0xc8b7a2a8a71c9d03ull, 0x5b4c2a9d0c4b7c11ull, 0x3f1d8e7a6b5c4d3eull, 0xa7e2f1c3d5b60819ull,
    0x0d9c8b7a69584736ull, 0xf0e1d2c3b4a59687ull, 0x6a5b4c3d2e1f0a9bull, 0x91827364554637a8ull};

// Adds stripes [0, stripes) of p into lanes [8], the first being stripe number `index` of the
// input (which decides where the scrambles fall).
using StripeAccumulateFn = void (*)(std::uint64_t* lanes, const std::uint8_t* p, std::size_t stripes,
                                    std::size_t index);

// The loop for `isa` (kScalar: the definition; kAvx2; kAvx512 and above: one zmm per stripe).
// `isa` must be supported by this CPU.
StripeAccumulateFn find_stripe_accumulate(Isa isa);

}  // namespace kiln::kernels
