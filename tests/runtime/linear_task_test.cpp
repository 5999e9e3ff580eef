// How linear() splits an op's weight tiles into tasks (linear_task_begin). Oracle: the ranges'
// defining properties — they tile [0, tiles) in order; decode ranges are even; prefill ranges
// start on a tile pair (the GEMM's unit) and shrink, so the last is a small share of the op.
#include <gtest/gtest.h>

#include "runtime/cpu/linear_runner.hpp"

namespace kiln::runtime {
namespace {

TEST(LinearTasks, RangesCoverEveryTileOnceInOrder) {
  for (std::size_t rows : {1, 2, 26, 512}) {
    for (std::size_t tiles : {1, 2, 3, 37, 192, 1024}) {
      for (std::size_t tasks : {1, 2, 7, 8, 32}) {
        if (tasks > tiles) continue;
        EXPECT_EQ(linear_task_begin(0, tasks, tiles, rows), 0u);
        EXPECT_EQ(linear_task_begin(tasks, tasks, tiles, rows), tiles);
        for (std::size_t t = 0; t < tasks; ++t) {
          EXPECT_LE(linear_task_begin(t, tasks, tiles, rows), linear_task_begin(t + 1, tasks, tiles, rows))
              << "rows " << rows << " tiles " << tiles << " tasks " << tasks << " task " << t;
        }
      }
    }
  }
}

TEST(LinearTasks, DecodeRangesAreEven) {
  for (std::size_t t = 0; t < 8; ++t) {
    EXPECT_EQ(linear_task_begin(t + 1, 8, 192, 1) - linear_task_begin(t, 8, 192, 1), 24u);
  }
}

TEST(LinearTasks, PrefillRangesStartOnPairsAndShrink) {
  // Q/K/V of the 1B model: 192 tiles in 8 tasks.
  std::size_t previous = 192;
  for (std::size_t t = 0; t < 8; ++t) {
    const std::size_t begin = linear_task_begin(t, 8, 192, 26), end = linear_task_begin(t + 1, 8, 192, 26);
    EXPECT_EQ(begin % 2, 0u) << "task " << t;
    EXPECT_LE(end - begin, previous) << "task " << t;
    previous = end - begin;
  }
  EXPECT_LE(previous, 192u / 32) << "the last task should be a small share of the op";
}

}  // namespace
}  // namespace kiln::runtime
