// Fast 64-bit content hashes for the compile cache: detect a corrupt or truncated cached blob
// (a flipped bit, a zeroed page, a short file) at memory speed, so a warm load can check every
// byte it maps. Not cryptographic: model identity uses SHA-256 (the IR's per-tensor hashes).
#pragma once

#include <cstdint>
#include <span>

#include "kernels/cpu_isa.hpp"

namespace kiln {
class ThreadPool;
}

namespace kiln::runtime {

// xxHash64-style: four independent multiply-rotate lanes over 32-byte stripes, then a mix of the
// lanes and the tail. Deterministic across machines (little-endian reads). For small inputs
// (headers, fingerprints); about 6 GB/s per core.
std::uint64_t hash64(std::span<const std::uint8_t> bytes, std::uint64_t seed = 0);

// XXH3-style bulk hash: the stripe loop of kernels/stripe_hash.hpp over the whole input (eight
// 64-bit lanes over 64-byte stripes, the lanes scrambled every 1 KiB), the tail zero-padded, the
// length mixed in at the end. `isa` picks the loop (the device's ISA, from select_isa); every
// level gives the same value everywhere, at memory speed with AVX2 or AVX-512.
std::uint64_t stripe_hash64(std::span<const std::uint8_t> bytes, Isa isa);

// stripe_hash64 of each 4 MiB chunk, computed on the pool's threads, then hash64 of the chunk
// hashes and the length: a different function from either hash of the whole, as sensitive.
std::uint64_t chunked_hash64(std::span<const std::uint8_t> bytes, ThreadPool& pool, Isa isa);

}  // namespace kiln::runtime
