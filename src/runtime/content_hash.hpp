// A fast 64-bit content hash for the compile cache: detects a corrupt or truncated cached blob
// (a flipped bit, a zeroed page, a short file) at memory speed, so a warm load can check every
// byte it maps. Not cryptographic: model identity uses SHA-256 (the IR's per-tensor hashes).
#pragma once

#include <cstdint>
#include <span>

namespace kiln {
class ThreadPool;
}

namespace kiln::runtime {

// xxHash64-style: four independent multiply-rotate lanes over 32-byte stripes, then a mix of the
// lanes and the tail. Deterministic across machines (little-endian reads).
std::uint64_t hash64(std::span<const std::uint8_t> bytes, std::uint64_t seed = 0);

// hash64 of each 4 MiB chunk, computed on the pool's threads, then hash64 of the chunk hashes:
// a different function from hash64 of the whole, but as sensitive, and memory-bound.
std::uint64_t chunked_hash64(std::span<const std::uint8_t> bytes, ThreadPool& pool);

}  // namespace kiln::runtime
