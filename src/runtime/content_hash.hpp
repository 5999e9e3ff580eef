// Fast 64-bit content hashes for the compile cache: detect a corrupt or truncated cached blob
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
// lanes and the tail. Deterministic across machines (little-endian reads). For small inputs
// (headers, fingerprints); about 6 GB/s per core.
std::uint64_t hash64(std::span<const std::uint8_t> bytes, std::uint64_t seed = 0);

// XXH3-style bulk hash: eight 64-bit lanes over 64-byte stripes, each lane adding
// lo32(d ^ key) * hi32(d ^ key) and its neighbour's raw word d (so a change to either half of a
// word reaches the sum), the lanes scrambled every 1 KiB, the tail zero-padded, the length
// mixed in at the end. One AVX-512 or two AVX2 instruction sequences per stripe where the CPU
// has them (memory bound), the same arithmetic in scalar code elsewhere: every path gives the
// same value everywhere.
std::uint64_t stripe_hash64(std::span<const std::uint8_t> bytes);

// The paths of stripe_hash64; kScalar is the definition the vector paths are tested against.
enum class StripeHashPath { kScalar, kAvx2, kAvx512 };
bool stripe_hash_path_supported(StripeHashPath path);  // whether this CPU can run it
std::uint64_t stripe_hash64(std::span<const std::uint8_t> bytes, StripeHashPath path);

// stripe_hash64 of each 4 MiB chunk, computed on the pool's threads, then hash64 of the chunk
// hashes and the length: a different function from either hash of the whole, as sensitive.
std::uint64_t chunked_hash64(std::span<const std::uint8_t> bytes, ThreadPool& pool);

}  // namespace kiln::runtime
