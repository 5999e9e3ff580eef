// Oracle for copy-on-write: after reserve_for_write a table never writes a block another table
// holds (every block in its write range has reference count 1), each replaced block is listed
// as a copy from the block it replaced, the other tables are untouched, and on failure nothing
// changes (block conservation as in block_pool_test).
#include <gtest/gtest.h>

#include "kv/block_table.hpp"
#include "support/test_support.hpp"

namespace kiln::kv {
namespace {

TEST(BlockTableCopyOnWrite, SharedPartialBlockIsCopiedBeforeWriting) {
  BlockPool pool(8);
  BlockTable parent(pool, 4);
  ASSERT_TRUE(parent.reserve(6));  // blocks 0, 1; positions 4, 5 in block 1 (partial)
  BlockTable child = parent.fork();
  std::vector<BlockCopy> copies;
  // The child writes position 6: block 1 is shared, so it gets a private copy.
  ASSERT_TRUE(child.reserve_for_write(6, 7, copies));
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, parent.blocks()[1]);
  EXPECT_EQ(copies[0].dst, child.blocks()[1]);
  EXPECT_NE(child.blocks()[1], parent.blocks()[1]);
  EXPECT_EQ(child.blocks()[0], parent.blocks()[0]);  // full, read-only block stays shared
  EXPECT_EQ(pool.ref_count(parent.blocks()[0]), 2);
  EXPECT_EQ(pool.ref_count(parent.blocks()[1]), 1);
  EXPECT_EQ(pool.ref_count(child.blocks()[1]), 1);
  // The parent now owns its block alone: writing needs no copy.
  copies.clear();
  ASSERT_TRUE(parent.reserve_for_write(6, 7, copies));
  EXPECT_TRUE(copies.empty());
}

TEST(BlockTableCopyOnWrite, WritesIntoFreshBlocksNeedNoCopy) {
  BlockPool pool(8);
  BlockTable parent(pool, 4);
  ASSERT_TRUE(parent.reserve(8));  // two full blocks
  BlockTable child = parent.fork();
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(child.reserve_for_write(8, 10, copies));  // a new third block
  EXPECT_TRUE(copies.empty());
  EXPECT_EQ(child.blocks().size(), 3u);
}

TEST(BlockTableCopyOnWrite, FailsAtomicallyWhenThePoolIsDry) {
  BlockPool pool(3);
  BlockTable parent(pool, 4);
  ASSERT_TRUE(parent.reserve(6));  // 2 blocks, 1 free
  BlockTable child = parent.fork();
  std::vector<BlockCopy> copies;
  // Needs a copy of block 1 and a new block for positions 8..9: two blocks, one free.
  EXPECT_FALSE(child.reserve_for_write(6, 10, copies));
  EXPECT_TRUE(copies.empty());
  EXPECT_EQ(child.blocks().size(), 2u);
  EXPECT_EQ(child.blocks()[1], parent.blocks()[1]);
  EXPECT_EQ(pool.ref_count(parent.blocks()[1]), 2);
  EXPECT_EQ(pool.num_free(), 1);
}

}  // namespace
}  // namespace kiln::kv
