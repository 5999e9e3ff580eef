// Oracle for ReferenceOps::copy_kv_blocks: a sequence that reads a copied block sees the same
// keys and values as one reading the original (attention over the block's positions gives the
// same output, and over a single position returns its value exactly), in every layer; and copies
// run in order, so a block freed after being copied can be a later copy's destination.
#include <gtest/gtest.h>

#include "runtime/reference/reference_ops.hpp"
#include "support/test_support.hpp"

namespace kiln::runtime {
namespace {

using models::AttentionSequence;
using models::KvBlockCopy;
using models::KvCacheLayout;

KvCacheLayout small_layout() {
  KvCacheLayout l;
  l.num_layers = 2;
  l.num_blocks = 4;
  l.block_size = 2;
  l.num_kv_heads = 1;
  l.head_dim = 2;
  return l;
}

// Host activations holding `values`.
models::Activations rows(models::HostActivationMemory& memory, const std::vector<float>& values) {
  std::copy(values.begin(), values.end(), memory.data());
  return {&memory};
}

// Attention of one query at position 0 (a single key) reads back that position's value.
std::vector<float> value_at_block(ReferenceOps& ops, std::int64_t layer, std::int32_t block) {
  const std::vector<std::int32_t> table{block};
  models::HostActivationMemory q(2), out(2);
  const AttentionSequence s{0, 1, 0, table};
  ops.attention(layer, rows(q, {0.5f, -1.0f}), 1, std::span(&s, 1), 1.0f, {&out});
  return {out.data(), out.data() + 2};
}

TEST(ReferenceOpsCopyKvBlocks, CopiedBlockReadsLikeTheOriginalInEveryLayer) {
  ReferenceOps ops;
  ops.allocate_kv_cache(small_layout());
  const std::vector<std::int64_t> slot{0 * 2 + 0};  // block 0, offset 0
  for (std::int64_t layer = 0; layer < 2; ++layer) {
    models::HostActivationMemory k(2), v(2);
    ops.store_kv(layer, rows(k, {1.0f, 2.0f}), rows(v, {3.0f + float(layer), -4.0f}), slot);
  }
  const std::vector<KvBlockCopy> copies{{0, 3}};
  ops.copy_kv_blocks(copies);
  for (std::int64_t layer = 0; layer < 2; ++layer) {
    EXPECT_EQ(value_at_block(ops, layer, 3), value_at_block(ops, layer, 0)) << layer;
    EXPECT_EQ(value_at_block(ops, layer, 3), (std::vector<float>{3.0f + float(layer), -4.0f}));
  }
}

TEST(ReferenceOpsCopyKvBlocks, RunsCopiesInOrder) {
  ReferenceOps ops;
  ops.allocate_kv_cache(small_layout());
  const std::vector<float> a{1.0f, 1.0f}, b{2.0f, 2.0f};
  models::HostActivationMemory k(2), v(2);
  ops.store_kv(0, rows(k, {0.0f, 0.0f}), rows(v, a), std::vector<std::int64_t>{0});      // block 0 holds a
  ops.store_kv(0, rows(k, {0.0f, 0.0f}), rows(v, b), std::vector<std::int64_t>{2 * 2});  // block 2 holds b
  // Block 0 is copied away first, then overwritten by block 2.
  ops.copy_kv_blocks(std::vector<KvBlockCopy>{{0, 1}, {2, 0}});
  EXPECT_EQ(value_at_block(ops, 0, 1), a);
  EXPECT_EQ(value_at_block(ops, 0, 0), b);
  EXPECT_KILN_ERROR(ops.copy_kv_blocks(std::vector<KvBlockCopy>{{0, 9}}), "outside the cache");
}

}  // namespace
}  // namespace kiln::runtime
