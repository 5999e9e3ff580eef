// Oracles: each vector path of stripe_hash64 equals its scalar definition on every length (odd
// tails, scramble boundaries); every single-bit flip, every zeroed 4 KiB page and every change
// of length changes the hash (what the compile cache relies on to reject a damaged entry);
// chunked_hash64 does not depend on how many threads compute it. A pinned value guards the
// function itself: changing it must come with a kCompiledBlobVersion bump.
#include "runtime/content_hash.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/cpu/compile_cache.hpp"
#include "runtime/thread_pool.hpp"

namespace kiln::runtime {
namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (std::uint8_t& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

TEST(ContentHash, VectorPathsEqualScalarDefinition) {
  const std::vector<std::uint8_t> data = random_bytes(70000, 1);
  const auto scalar = [&](std::size_t offset, std::size_t n) {
    return stripe_hash64({data.data() + offset, n}, StripeHashPath::kScalar);
  };
  int paths = 0;
  for (StripeHashPath path : {StripeHashPath::kAvx2, StripeHashPath::kAvx512}) {
    if (!stripe_hash_path_supported(path)) continue;
    ++paths;
    const int id = static_cast<int>(path);
    for (std::size_t n = 0; n <= 2200; ++n) {
      ASSERT_EQ(stripe_hash64({data.data(), n}, path), scalar(0, n)) << "path " << id << ", " << n << " bytes";
    }
    for (std::size_t n : {4095u, 4096u, 65536u, 65537u, 70000u}) {
      EXPECT_EQ(stripe_hash64({data.data(), n}, path), scalar(0, n)) << "path " << id << ", " << n << " bytes";
    }
    for (std::size_t offset = 1; offset < 64; offset += 7) {  // unaligned starts
      EXPECT_EQ(stripe_hash64({data.data() + offset, 5000}, path), scalar(offset, 5000)) << "path " << id;
    }
  }
  EXPECT_EQ(stripe_hash64({data.data(), 5000}), scalar(0, 5000));  // the default picks one of them
  if (paths == 0) GTEST_SKIP() << "no vector path on this CPU: the default is the scalar definition";
}

TEST(ContentHash, EverySingleBitFlipChangesTheHash) {
  std::vector<std::uint8_t> data = random_bytes(2100, 2);  // 32 stripes, two scrambles and a tail
  const std::uint64_t clean = stripe_hash64(data);
  for (std::size_t byte = 0; byte < data.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      data[byte] ^= static_cast<std::uint8_t>(1u << bit);
      ASSERT_NE(stripe_hash64(data), clean) << "byte " << byte << " bit " << bit;
      data[byte] ^= static_cast<std::uint8_t>(1u << bit);
    }
  }
}

TEST(ContentHash, ZeroedPagesAndLengthChangesAreDetected) {
  std::vector<std::uint8_t> data = random_bytes(std::size_t{64} << 10, 3);
  const std::uint64_t clean = stripe_hash64(data);
  for (std::size_t page = 0; page < data.size() / 4096; ++page) {
    std::vector<std::uint8_t> damaged = data;
    std::fill_n(damaged.begin() + static_cast<std::ptrdiff_t>(page * 4096), 4096, std::uint8_t{0});
    EXPECT_NE(stripe_hash64(damaged), clean) << "page " << page;
  }
  // A tail of zeros is padded with zeros: only the length tells these apart.
  std::vector<std::uint8_t> zeros(100, 0);
  for (std::size_t n = 1; n < zeros.size(); ++n) {
    EXPECT_NE(stripe_hash64({zeros.data(), n}), stripe_hash64({zeros.data(), n - 1})) << n;
  }
  EXPECT_NE(stripe_hash64({data.data(), data.size() - 1}), clean);
}

TEST(ContentHash, ChunkedHashIsIndependentOfThreadsAndSeesTheLastByte) {
  std::vector<std::uint8_t> data = random_bytes((std::size_t{9} << 20) + 13, 4);  // 3 chunks, a short last one
  ThreadPool one(ThreadPoolOptions{.num_threads = 1});
  ThreadPool three(ThreadPoolOptions{.num_threads = 3});
  const std::uint64_t clean = chunked_hash64(data, one);
  EXPECT_EQ(chunked_hash64(data, three), clean);
  data.back() ^= 0x80;
  EXPECT_NE(chunked_hash64(data, three), clean);
}

TEST(ContentHash, PinnedValue) {
  std::vector<std::uint8_t> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
  // Computed once with this definition; a different value means cache entries hash differently.
  EXPECT_EQ(stripe_hash64(data, StripeHashPath::kScalar), 9196892724148602406ull)
      << "changed stripe_hash64: bump kCompiledBlobVersion (now " << kCompiledBlobVersion << ") and this value";
}

}  // namespace
}  // namespace kiln::runtime
