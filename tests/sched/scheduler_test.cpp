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

// A new sequence starts only while the pool keeps its watermark of free blocks, so it never
// pushes a running one out; the waiting ones after it wait too (first come, first served), but
// running ones after it are still served.
TEST(Scheduler, AdmitsWaitingSequencesAboveTheWatermarkInArrivalOrder) {
  kv::BlockPool pool(10);  // watermark: 1 block
  kv::BlockTable running(pool, 4), first(pool, 4), second(pool, 4), later_running(pool, 4);
  ASSERT_TRUE(running.reserve(16));        // 4 blocks
  ASSERT_TRUE(later_running.reserve(12));  // 3 blocks: 3 free
  std::vector<SchedulableSequence> seqs{{17, 16, &running},
                                        {12, 0, &first, /*waiting=*/true},  // needs 3: would leave 0 (< 1)
                                        {4, 0, &second, /*waiting=*/true},  // needs 1, but first came first
                                        {13, 12, &later_running}};
  Scheduler s({.max_num_batched_tokens = 64, .max_num_seqs = 8});
  const auto out = s.schedule(seqs);
  ASSERT_EQ(out.chunks.size(), 2u);
  EXPECT_EQ(out.chunks[0].sequence, 0u);
  EXPECT_EQ(out.chunks[1].sequence, 3u);
  EXPECT_TRUE(out.preempted.empty());
  EXPECT_TRUE(first.blocks().empty());
  EXPECT_TRUE(second.blocks().empty());
  // With nothing running, a waiting sequence may take the whole pool.
  kv::BlockPool small(3);
  kv::BlockTable only(small, 4);
  std::vector<SchedulableSequence> alone{{12, 0, &only, true}};
  EXPECT_EQ(s.schedule(alone).chunks.size(), 1u);
  EXPECT_EQ(small.num_free(), 0);
}

TEST(Scheduler, WithoutSplitFusePromptsAreNeverCut) {
  kv::BlockPool pool(64);
  kv::BlockTable decode(pool, 4), big(pool, 4), small(pool, 4);
  ASSERT_TRUE(decode.reserve(8));
  std::vector<SchedulableSequence> seqs{{9, 8, &decode}, {30, 0, &big, true}, {5, 0, &small, true}};
  Scheduler split({.max_num_batched_tokens = 20, .max_num_seqs = 8});
  auto out = split.schedule(seqs);
  ASSERT_EQ(out.chunks.size(), 2u);
  EXPECT_EQ(out.chunks[1].num_tokens, 19);  // cut
  big.clear();
  seqs[1].num_computed = 0;
  Scheduler whole({.max_num_batched_tokens = 20, .max_num_seqs = 8, .dynamic_split_fuse = false});
  out = whole.schedule(seqs);
  ASSERT_EQ(out.chunks.size(), 1u);  // the big prompt waits, and the small one behind it too
  EXPECT_EQ(out.chunks[0].sequence, 0u);
  // A prompt longer than any step is cut all the same (alone in its step), or it would never run.
  kv::BlockTable huge(pool, 4);
  std::vector<SchedulableSequence> only{{50, 0, &huge, true}};
  out = whole.schedule(only);
  ASSERT_EQ(out.chunks.size(), 1u);
  EXPECT_EQ(out.chunks[0].num_tokens, 20);
}

}  // namespace
}  // namespace kiln::sched
