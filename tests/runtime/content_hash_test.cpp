// Oracles: each vector level of stripe_hash64 equals its scalar definition on every length (odd
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

// Each vector level against the scalar definition.
class StripeHashLevel : public ::testing::TestWithParam<Isa> {};

TEST_P(StripeHashLevel, EqualsScalarDefinition) {
  const Isa isa = GetParam();
  if (!isa_supported(isa)) GTEST_SKIP() << "this CPU lacks " << isa_name(isa);
  const std::vector<std::uint8_t> data = random_bytes(70000, 1);
  const auto scalar = [&](std::size_t offset, std::size_t n) {
    return stripe_hash64({data.data() + offset, n}, Isa::kScalar);
  };
  for (std::size_t n = 0; n <= 2200; ++n) {
    ASSERT_EQ(stripe_hash64({data.data(), n}, isa), scalar(0, n)) << n << " bytes";
  }
  for (std::size_t n : {4095u, 4096u, 65536u, 65537u, 70000u}) {
    EXPECT_EQ(stripe_hash64({data.data(), n}, isa), scalar(0, n)) << n << " bytes";
  }
  for (std::size_t offset = 1; offset < 64; offset += 7) {  // unaligned starts
    EXPECT_EQ(stripe_hash64({data.data() + offset, 5000}, isa), scalar(offset, 5000)) << "offset " << offset;
  }
}

INSTANTIATE_TEST_SUITE_P(VectorLevels, StripeHashLevel, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

TEST(ContentHash, EverySingleBitFlipChangesTheHash) {
  std::vector<std::uint8_t> data = random_bytes(2100, 2);  // 32 stripes, two scrambles and a tail
  const std::uint64_t clean = stripe_hash64(data, detected_isa());
  for (std::size_t byte = 0; byte < data.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      data[byte] ^= static_cast<std::uint8_t>(1u << bit);
      ASSERT_NE(stripe_hash64(data, detected_isa()), clean) << "byte " << byte << " bit " << bit;
      data[byte] ^= static_cast<std::uint8_t>(1u << bit);
    }
  }
}

TEST(ContentHash, ZeroedPagesAndLengthChangesAreDetected) {
  std::vector<std::uint8_t> data = random_bytes(std::size_t{64} << 10, 3);
  const std::uint64_t clean = stripe_hash64(data, detected_isa());
  for (std::size_t page = 0; page < data.size() / 4096; ++page) {
    std::vector<std::uint8_t> damaged = data;
    std::fill_n(damaged.begin() + static_cast<std::ptrdiff_t>(page * 4096), 4096, std::uint8_t{0});
    EXPECT_NE(stripe_hash64(damaged, detected_isa()), clean) << "page " << page;
  }
  // A tail of zeros is padded with zeros: only the length tells these apart.
  std::vector<std::uint8_t> zeros(100, 0);
  for (std::size_t n = 1; n < zeros.size(); ++n) {
    EXPECT_NE(stripe_hash64({zeros.data(), n}, detected_isa()), stripe_hash64({zeros.data(), n - 1}, detected_isa()))
        << n;
  }
  EXPECT_NE(stripe_hash64({data.data(), data.size() - 1}, detected_isa()), clean);
}

TEST(ContentHash, ChunkedHashIsIndependentOfThreadsAndSeesTheLastByte) {
  std::vector<std::uint8_t> data = random_bytes((std::size_t{9} << 20) + 13, 4);  // 3 chunks, a short last one
  ThreadPool one(ThreadPoolOptions{.num_threads = 1});
  ThreadPool three(ThreadPoolOptions{.num_threads = 3});
  const std::uint64_t clean = chunked_hash64(data, one, detected_isa());
  EXPECT_EQ(chunked_hash64(data, three, detected_isa()), clean);
  data.back() ^= 0x80;
  EXPECT_NE(chunked_hash64(data, three, detected_isa()), clean);
}

TEST(ContentHash, PinnedValue) {
  std::vector<std::uint8_t> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
  // Computed once with this definition; a different value means cache entries hash differently.
  EXPECT_EQ(stripe_hash64(data, Isa::kScalar), 9196892724148602406ull)
      << "changed stripe_hash64: bump kCompiledBlobVersion (now " << kCompiledBlobVersion << ") and this value";
}

}  // namespace
}  // namespace kiln::runtime
