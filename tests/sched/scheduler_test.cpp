// Oracles: the token budget is never exceeded, every scheduled chunk has the blocks it needs,
// and preemption frees the newest sequences first, never the ones served earlier in the step.
#include "sched/scheduler.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace kiln::sched {
namespace {

TEST(Scheduler, ChunksPrefillWithinBudgetAndServesDecodeFirstComer) {
  kv::BlockPool pool(64);
  kv::BlockTable a(pool, 4), b(pool, 4), c(pool, 4);
  std::vector<SchedulableSequence> seqs{{11, 10, &a}, {100, 0, &b}, {30, 0, &c}};  // decode, long prefill, prefill
  ASSERT_TRUE(a.reserve(10));
  Scheduler s({.max_num_batched_tokens = 40, .max_num_seqs = 8});
  const auto out = s.schedule(seqs);
  ASSERT_EQ(out.chunks.size(), 2u);
  EXPECT_EQ(out.chunks[0].num_tokens, 1);
  EXPECT_EQ(out.chunks[1].num_tokens, 39);  // the rest of the budget
  EXPECT_TRUE(out.preempted.empty());
  EXPECT_GE(b.capacity_tokens(), 39);
  EXPECT_TRUE(c.blocks().empty());
}

TEST(Scheduler, PreemptsNewestWhenBlocksRunOut) {
  kv::BlockPool pool(6);
  kv::BlockTable a(pool, 4), b(pool, 4);
  ASSERT_TRUE(a.reserve(12));  // 3 blocks
  ASSERT_TRUE(b.reserve(12));  // 3 blocks: the pool is full
  std::vector<SchedulableSequence> seqs{{13, 12, &a}, {13, 12, &b}};
  Scheduler s({.max_num_batched_tokens = 64, .max_num_seqs = 8});
  const auto out = s.schedule(seqs);
  ASSERT_EQ(out.preempted, std::vector<std::size_t>{1});
  EXPECT_EQ(seqs[1].num_computed, 0);
  // a got its 4th block; b restarts from scratch and 2 blocks remain for it: it waits.
  ASSERT_EQ(out.chunks.size(), 1u);
  EXPECT_EQ(out.chunks[0].sequence, 0u);
  EXPECT_EQ(a.blocks().size(), 4u);
}

TEST(Scheduler, RespectsMaxNumSeqs) {
  kv::BlockPool pool(64);
  std::vector<std::unique_ptr<kv::BlockTable>> tables;
  std::vector<SchedulableSequence> seqs;
  for (int i = 0; i < 5; ++i) {
    tables.push_back(std::make_unique<kv::BlockTable>(pool, 4));
    seqs.push_back({3, 0, tables.back().get()});
  }
  Scheduler s({.max_num_batched_tokens = 1000, .max_num_seqs = 2});
  EXPECT_EQ(s.schedule(seqs).chunks.size(), 2u);
  EXPECT_KILN_ERROR(Scheduler({.max_num_batched_tokens = 0}), "max_num_batched_tokens");
}

}  // namespace
}  // namespace kiln::sched
