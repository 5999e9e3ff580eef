// Oracle: conservation of blocks. Whatever sequence of reserve / fork / truncate / clear runs,
// free blocks + blocks referenced by live tables == the pool size, and a block is free exactly
// when no table holds it.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "kv/block_table.hpp"
#include "support/test_support.hpp"

namespace kiln::kv {
namespace {

TEST(BlockPool, AllocatesUntilExhausted) {
  BlockPool pool(3);
  EXPECT_EQ(pool.allocate(), 0);
  EXPECT_EQ(pool.allocate(), 1);
  EXPECT_EQ(pool.allocate(), 2);
  EXPECT_EQ(pool.allocate(), std::nullopt);
  pool.release(1);
  EXPECT_EQ(pool.num_free(), 1);
  EXPECT_EQ(pool.allocate(), 1);
  EXPECT_KILN_ERROR(BlockPool(0), "at least one block");
}

TEST(BlockTable, ReserveRoundsUpToBlocksAndFailsAtomically) {
  BlockPool pool(4);
  BlockTable a(pool, 16);
  ASSERT_TRUE(a.reserve(17));
  EXPECT_EQ(a.blocks().size(), 2u);
  EXPECT_EQ(a.capacity_tokens(), 32);
  BlockTable b(pool, 16);
  EXPECT_FALSE(b.reserve(16 * 3));  // only 2 free
  EXPECT_TRUE(b.blocks().empty());
  EXPECT_EQ(pool.num_free(), 2);
  a.truncate(5);
  EXPECT_EQ(a.blocks().size(), 1u);
  EXPECT_EQ(pool.num_free(), 3);
}

TEST(BlockTable, ForkSharesAndReleasesOnLastUser) {
  BlockPool pool(4);
  BlockTable a(pool, 4);
  ASSERT_TRUE(a.reserve(8));
  {
    BlockTable b = a.fork();
    EXPECT_EQ(pool.ref_count(a.blocks()[0]), 2);
    a.clear();
    EXPECT_EQ(pool.num_free(), 2);  // b still holds both
  }
  EXPECT_EQ(pool.num_free(), 4);
}

TEST(BlockTable, RandomOperationsConserveBlocks) {
  BlockPool pool(32);
  std::vector<std::unique_ptr<BlockTable>> tables;
  std::mt19937 rng(11);
  for (int step = 0; step < 5000; ++step) {
    const int op = static_cast<int>(rng() % 5);
    if (op == 0 || tables.empty()) {
      tables.push_back(std::make_unique<BlockTable>(pool, 4));
    } else {
      auto& t = *tables[rng() % tables.size()];
      if (op == 1) {
        (void)t.reserve(static_cast<std::int64_t>(rng() % 40));
      } else if (op == 2) {
        t.truncate(static_cast<std::int64_t>(rng() % 40));
      } else if (op == 3 && tables.size() < 12) {
        tables.push_back(std::make_unique<BlockTable>(t.fork()));
      } else {
        tables.erase(tables.begin() + static_cast<std::ptrdiff_t>(rng() % tables.size()));
      }
    }
    std::map<std::int32_t, std::int32_t> refs;
    for (const auto& t : tables) {
      for (std::int32_t b : t->blocks()) ++refs[b];
    }
    ASSERT_EQ(pool.num_free() + static_cast<std::int32_t>(refs.size()), pool.num_blocks());
    for (const auto& [block, count] : refs) ASSERT_EQ(pool.ref_count(block), count);
  }
}

}  // namespace
}  // namespace kiln::kv
