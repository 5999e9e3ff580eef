// The block pool's KV cache events. Oracles: the cache's own state (a subscriber that applies
// the events knows exactly the blocks the pool can find, under a random workload that evicts)
// and the hash chain (a stored run's parent and tokens name its blocks' hashes).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "kv/block_hash.hpp"
#include "kv/block_table.hpp"
#include "kv/prefix_cache.hpp"
#include "support/test_support.hpp"

namespace kiln::kv {
namespace {

constexpr std::uint64_t kSalt = 99;
constexpr std::int32_t kBlock = 4;

// Caches every full block of `ids` in a fresh table, which keeps the blocks referenced.
std::unique_ptr<BlockTable> compute(BlockPool& pool, const std::vector<std::int32_t>& ids) {
  auto table = std::make_unique<BlockTable>(pool, kBlock);
  std::vector<std::uint64_t> hashes;
  const std::size_t n = ids.size() / kBlock;
  hash_blocks(hashes, ids, kSalt, kBlock, n);
  const PrefixChain chain{ids, hashes, kSalt, kBlock};
  const std::size_t hits = take_cached_prefix(*table, chain);
  if (!table->reserve(static_cast<std::int64_t>(n) * kBlock)) return nullptr;
  cache_blocks(*table, chain, hits, n);
  return table;
}

TEST(KvCacheEvents, StartWithAllClearedAndNameStoredRunsByTheirChain) {
  BlockPool pool(8);
  pool.record_events(kSalt);
  const auto a = testing::consecutive_ids(1, 3 * kBlock);
  auto first = compute(pool, a);
  auto b = a;
  b[2 * kBlock] = 0;  // shares two blocks with a
  auto second = compute(pool, b);

  const std::vector<KvCacheEvent> events = pool.take_events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<KvAllBlocksCleared>(events[0]));
  std::vector<std::uint64_t> hashes;
  hash_blocks(hashes, a, kSalt, kBlock, 3);
  const auto& stored = std::get<KvBlocksStored>(events[1]);
  EXPECT_EQ(stored.block_hashes, hashes);  // one event for the run of three
  EXPECT_EQ(stored.parent_block_hash, std::nullopt);
  EXPECT_EQ(stored.token_ids, a);
  EXPECT_EQ(stored.block_size, kBlock);
  const auto& diverged = std::get<KvBlocksStored>(events[2]);  // only the block that differs
  ASSERT_EQ(diverged.block_hashes.size(), 1u);
  EXPECT_EQ(diverged.parent_block_hash, hashes[1]);
  EXPECT_EQ(diverged.block_hashes[0], hash_block(hashes[1], std::span(b).subspan(2 * kBlock)));
  EXPECT_EQ(diverged.token_ids, std::vector<std::int32_t>(b.begin() + 2 * kBlock, b.end()));
  EXPECT_TRUE(pool.take_events().empty());  // taken
}

TEST(KvCacheEvents, EvictionIsReportedAsOneRemoval) {
  BlockPool pool(3);
  pool.record_events(kSalt);
  compute(pool, testing::consecutive_ids(1, 3 * kBlock)).reset();  // three idle cached blocks
  pool.take_events();
  ASSERT_EQ(pool.num_idle_cached(), 3);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(pool.allocate().has_value());  // recycles the two oldest
  const std::vector<KvCacheEvent> events = pool.take_events();
  ASSERT_EQ(events.size(), 1u);
  std::vector<std::uint64_t> hashes;
  hash_blocks(hashes, testing::consecutive_ids(1, 3 * kBlock), kSalt, kBlock, 3);
  const auto& removed = std::get<KvBlocksRemoved>(events[0]);
  EXPECT_EQ(std::set(removed.block_hashes.begin(), removed.block_hashes.end()).size(), 2u);
  for (const std::uint64_t h : removed.block_hashes) EXPECT_TRUE(h == hashes[0] || h == hashes[1] || h == hashes[2]);
}

TEST(KvCacheEvents, MustStartWithAnEmptyCache) {
  BlockPool pool(2);
  auto table = compute(pool, testing::consecutive_ids(1, kBlock));
  EXPECT_KILN_ERROR(pool.record_events(kSalt), "recorded from the start");
}

// A subscriber's view, rebuilt from the events alone, against what the pool can find: after
// every step of a random workload that shares prefixes and evicts, the hashes the events say are
// cached are exactly the ones the pool holds, with the parents and tokens the events gave.
TEST(KvCacheEvents, ASubscriberKnowsExactlyWhatTheCacheHolds) {
  constexpr std::int32_t kBlocks = 16;
  BlockPool pool(kBlocks);
  pool.record_events(kSalt);
  std::mt19937 rng(11);
  struct Content {
    std::uint64_t parent;
    std::vector<std::int32_t> tokens;
  };
  std::map<std::uint64_t, Content> view;  // what the subscriber believes is cached
  std::map<std::uint64_t, Content> ever;  // every block ever reported stored
  std::vector<std::unique_ptr<BlockTable>> tables;
  std::size_t removals = 0;
  for (int step = 0; step < 2000; ++step) {
    if (tables.size() < 3 && rng() % 2 == 0) {
      // Prompts of 1 to 4 blocks from few stems, so that prefixes repeat and diverge.
      std::vector<std::int32_t> ids = testing::consecutive_ids(static_cast<std::int32_t>(rng() % 3) * 100, 2 * kBlock);
      const auto extra = static_cast<std::int32_t>(rng() % 3);
      for (std::int32_t i = 0; i < extra * kBlock; ++i) ids.push_back(static_cast<std::int32_t>(rng() % 5));
      ids.resize(static_cast<std::size_t>((1 + rng() % 4) * kBlock));
      if (auto t = compute(pool, ids)) tables.push_back(std::move(t));
    } else if (!tables.empty()) {
      tables.erase(tables.begin() + static_cast<std::ptrdiff_t>(rng() % tables.size()));
    }
    for (const KvCacheEvent& event : pool.take_events()) {
      if (const auto* s = std::get_if<KvBlocksStored>(&event)) {
        ASSERT_EQ(s->token_ids.size(), s->block_hashes.size() * kBlock);
        std::uint64_t parent = s->parent_block_hash.value_or(kSalt);
        for (std::size_t i = 0; i < s->block_hashes.size(); ++i) {
          const std::span<const std::int32_t> t = std::span(s->token_ids).subspan(i * kBlock, kBlock);
          ASSERT_EQ(s->block_hashes[i], hash_block(parent, t));  // the chain names the block
          ASSERT_FALSE(view.contains(s->block_hashes[i])) << "stored twice without a removal";
          view[s->block_hashes[i]] = ever[s->block_hashes[i]] = {parent, {t.begin(), t.end()}};
          parent = s->block_hashes[i];
        }
      } else if (const auto* r = std::get_if<KvBlocksRemoved>(&event)) {
        for (const std::uint64_t h : r->block_hashes) ASSERT_EQ(view.erase(h), 1u) << "removed, never stored";
        removals += r->block_hashes.size();
      } else {
        view.clear();
      }
    }
    for (const auto& [hash, c] : ever) ASSERT_EQ(pool.holds(hash, c.parent, c.tokens), view.contains(hash));
  }
  EXPECT_GT(removals, 20u);  // the workload did evict
  EXPECT_GT(ever.size(), static_cast<std::size_t>(kBlocks));
}

}  // namespace
}  // namespace kiln::kv
