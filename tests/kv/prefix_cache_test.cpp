// Prefix caching in the block pool, without a model. Oracles: the rules themselves (a cached
// block is found only by its exact content and parent, idle cached blocks are recycled only when
// no free block is left and then least recently used first, nothing is ever lost: free + idle +
// referenced == the pool), and a brute-force map of hash -> content for a random workload.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

#include "kv/block_hash.hpp"
#include "kv/block_table.hpp"
#include "kv/prefix_cache.hpp"

namespace kiln::kv {
namespace {

TEST(BlockHash, ChainsOverParentAndTokens) {
  const auto a = testing::consecutive_ids(1, 4), b = testing::consecutive_ids(2, 4);
  EXPECT_EQ(hash_block(7, a), hash_block(7, a));
  EXPECT_NE(hash_block(7, a), hash_block(8, a));  // another parent (or salt)
  EXPECT_NE(hash_block(7, a), hash_block(7, b));
  const std::vector<std::int32_t> swapped{2, 1, 3, 4};
  EXPECT_NE(hash_block(7, a), hash_block(7, swapped));  // order matters
}

TEST(PrefixCache, CachedBlockIsFoundByContentAndSharesIt) {
  BlockPool pool(4);
  const auto t = testing::consecutive_ids(10, 4);
  const std::int32_t b = *pool.allocate();
  pool.cache(b, hash_block(1, t), 1, t);
  const auto found = pool.find_cached(hash_block(1, t), 1, t);
  ASSERT_EQ(found, b);
  EXPECT_EQ(pool.ref_count(b), 2);
  // Another parent, other tokens, or a hash that only collides: not found.
  EXPECT_EQ(pool.find_cached(hash_block(2, t), 2, t), std::nullopt);
  EXPECT_EQ(pool.find_cached(hash_block(1, t), 2, t), std::nullopt);
  EXPECT_EQ(pool.find_cached(hash_block(1, t), 1, testing::consecutive_ids(11, 4)), std::nullopt);
}

TEST(PrefixCache, IdleCachedBlocksAreRecycledOnlyWhenNothingIsFreeOldestFirst) {
  BlockPool pool(3);
  std::vector<std::int32_t> blocks;
  for (int i = 0; i < 3; ++i) blocks.push_back(*pool.allocate());
  pool.cache(blocks[0], 100, 0, testing::consecutive_ids(0, 4));
  pool.cache(blocks[1], 101, 0, testing::consecutive_ids(4, 4));
  pool.release(blocks[1]);  // idle, used longer ago
  pool.release(blocks[0]);  // idle, used last
  pool.release(blocks[2]);  // not cached: free
  EXPECT_EQ(pool.num_free(), 3);
  EXPECT_EQ(pool.num_idle_cached(), 2);
  // The free block goes first; the cached ones stay findable.
  EXPECT_EQ(pool.allocate(), blocks[2]);
  EXPECT_EQ(pool.num_idle_cached(), 2);
  // Then the least recently used idle block, whose content is forgotten.
  EXPECT_EQ(pool.allocate(), blocks[1]);
  EXPECT_EQ(pool.find_cached(101, 0, testing::consecutive_ids(4, 4)), std::nullopt);
  EXPECT_EQ(pool.find_cached(100, 0, testing::consecutive_ids(0, 4)), blocks[0]);  // leaves the idle list
  EXPECT_EQ(pool.num_idle_cached(), 0);
  EXPECT_EQ(pool.allocate(), std::nullopt);
}

// Writing into a cached block (a chat turn that resumes inside a block the previous turn filled)
// must not change what its hash promises: the writer gets a copy, and the cached block stays
// findable with its content.
TEST(PrefixCache, WritingACachedBlockCopiesIt) {
  BlockPool pool(4);
  const auto t = testing::consecutive_ids(0, 4);
  BlockTable table(pool, 4);
  ASSERT_TRUE(table.reserve(8));
  const std::int32_t cached = table.blocks()[0];
  pool.cache(cached, hash_block(0, t), 0, t);
  table.truncate(2);  // keep positions [0, 2) of the cached block, rewrite from 2 on
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(table.reserve_for_write(2, 5, copies));
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, cached);
  EXPECT_NE(table.blocks()[0], cached);
  EXPECT_EQ(pool.find_cached(hash_block(0, t), 0, t), cached);
}

TEST(PrefixCache, ASecondCopyOfTheSameContentIsNotCached) {
  BlockPool pool(2);
  const auto t = testing::consecutive_ids(3, 4);
  const std::int32_t a = *pool.allocate(), b = *pool.allocate();
  pool.cache(a, hash_block(0, t), 0, t);
  pool.cache(b, hash_block(0, t), 0, t);
  pool.release(b);
  EXPECT_EQ(pool.num_idle_cached(), 0);  // b went to the free list
  EXPECT_EQ(pool.find_cached(hash_block(0, t), 0, t), a);
}

// Random tables allocating, caching, finding and letting go: blocks are conserved, every
// find returns a block whose content is what was cached under that hash, and a table's block
// is never recycled while the table holds it.
TEST(PrefixCache, RandomWorkloadConservesBlocksAndNeverReturnsWrongContent) {
  constexpr std::int32_t kBlocks = 24, kBlockSize = 4;
  BlockPool pool(kBlocks);
  std::mt19937 rng(5);
  std::vector<std::vector<std::int32_t>> prefixes;  // candidate prompts: few, so they repeat
  for (int p = 0; p < 6; ++p)
    prefixes.push_back(testing::consecutive_ids(static_cast<std::int32_t>(rng() % 3) * 4, 12));
  std::vector<std::unique_ptr<BlockTable>> tables;
  std::map<std::int32_t, std::vector<std::int32_t>> content;  // block -> tokens cached in it
  for (int step = 0; step < 3000; ++step) {
    if (tables.size() < 5 && rng() % 2 == 0) {
      const auto& prompt = prefixes[rng() % prefixes.size()];
      auto table = std::make_unique<BlockTable>(pool, kBlockSize);
      BlockTable& t = *table;
      std::uint64_t parent = 99;
      bool hit = true;
      for (std::size_t i = 0; i < prompt.size() / kBlockSize; ++i) {
        const std::span<const std::int32_t> block_tokens(prompt.data() + i * kBlockSize, kBlockSize);
        const std::uint64_t h = hash_block(parent, block_tokens);
        std::optional<std::int32_t> b = hit ? pool.find_cached(h, parent, block_tokens) : std::nullopt;
        if (b) {
          ASSERT_EQ(content.at(*b), std::vector<std::int32_t>(block_tokens.begin(), block_tokens.end()));
          t.append(*b);
        } else {
          hit = false;
          if (!t.reserve(static_cast<std::int64_t>(i + 1) * kBlockSize)) break;
          const std::int32_t fresh = t.blocks().back();
          pool.cache(fresh, h, parent, block_tokens);
          // Cached under this hash now: this block, or one cached earlier with the same content.
          const std::optional<std::int32_t> cached = pool.find_cached(h, parent, block_tokens);
          ASSERT_TRUE(cached.has_value());
          pool.release(*cached);
          if (*cached == fresh) content[fresh].assign(block_tokens.begin(), block_tokens.end());
        }
        parent = h;
      }
      tables.push_back(std::move(table));
    } else if (!tables.empty()) {
      tables.erase(tables.begin() + static_cast<std::ptrdiff_t>(rng() % tables.size()));
    }
    std::int32_t referenced = 0;
    for (std::int32_t b = 0; b < kBlocks; ++b) referenced += pool.ref_count(b) > 0 ? 1 : 0;
    ASSERT_EQ(referenced + pool.num_free(), kBlocks);
    for (const auto& t : tables)
      for (std::int32_t b : t->blocks()) ASSERT_GT(pool.ref_count(b), 0);
  }
}

// A table takes the longest prefix whose blocks are cached, and stops at the first block that
// is not (its own content, or a parent that differs). Oracle: the blocks the first table cached.
TEST(PrefixChain, TakesTheLongestCachedPrefixUpToTheFirstMiss) {
  constexpr std::int32_t kBlock = 4;
  constexpr std::uint64_t kSalt = 99;
  BlockPool pool(8);
  const auto ids = testing::consecutive_ids(1, 3 * kBlock);
  std::vector<std::uint64_t> hashes;
  hash_blocks(hashes, ids, kSalt, kBlock, 3);
  ASSERT_EQ(hashes.size(), 3u);
  EXPECT_EQ(hashes[1], hash_block(hashes[0], std::span(ids).subspan(kBlock, kBlock)));
  BlockTable computed(pool, kBlock);
  ASSERT_TRUE(computed.reserve(3 * kBlock));
  cache_blocks(computed, {ids, hashes, kSalt, kBlock}, 0, 2);  // the third block is not cached

  BlockTable reused(pool, kBlock);
  EXPECT_EQ(take_cached_prefix(reused, {ids, hashes, kSalt, kBlock}), 2u);
  ASSERT_EQ(reused.blocks().size(), 2u);
  EXPECT_EQ(reused.blocks()[0], computed.blocks()[0]);
  EXPECT_EQ(reused.blocks()[1], computed.blocks()[1]);
  EXPECT_EQ(pool.ref_count(computed.blocks()[0]), 2);

  auto other = ids;
  other[kBlock + 1] = 0;  // block 1 differs: only block 0 is shared
  std::vector<std::uint64_t> other_hashes;
  hash_blocks(other_hashes, other, kSalt, kBlock, 3);
  BlockTable diverging(pool, kBlock);
  EXPECT_EQ(take_cached_prefix(diverging, {other, other_hashes, kSalt, kBlock}), 1u);

  std::vector<std::uint64_t> salted;  // another model's cache: nothing is shared
  hash_blocks(salted, ids, kSalt + 1, kBlock, 3);
  BlockTable elsewhere(pool, kBlock);
  EXPECT_EQ(take_cached_prefix(elsewhere, {ids, salted, kSalt + 1, kBlock}), 0u);
  EXPECT_TRUE(elsewhere.blocks().empty());
}

}  // namespace
}  // namespace kiln::kv
