// How linear() splits an op's weight tiles into tasks (linear_task_begin). Oracle: the ranges'
// defining properties — they tile [0, tiles) in order, start on a tile pair (the GEMM's unit)
// and shrink, so the last is a small share of the op.
#include <gtest/gtest.h>

#include "runtime/cpu/linear_runner.hpp"

namespace kiln::runtime {
namespace {

TEST(LinearTasks, RangesCoverEveryTileOnceInOrder) {
  for (std::size_t tiles : {1, 2, 3, 37, 192, 1024}) {
    for (std::size_t tasks : {1, 2, 7, 8, 32}) {
      if (tasks > tiles) continue;
      EXPECT_EQ(linear_task_begin(0, tasks, tiles), 0u);
      EXPECT_EQ(linear_task_begin(tasks, tasks, tiles), tiles);
      for (std::size_t t = 0; t < tasks; ++t) {
        EXPECT_LE(linear_task_begin(t, tasks, tiles), linear_task_begin(t + 1, tasks, tiles))
            << "tiles " << tiles << " tasks " << tasks << " task " << t;
      }
    }
  }
}

TEST(LinearTasks, RangesStartOnPairsAndShrink) {
  // Q/K/V of the 1B model: 192 tiles in 8 tasks; its head in decode: 8016 tiles in 131.
  for (const auto& [tiles, tasks] : {std::pair<std::size_t, std::size_t>{192, 8}, {8016, 131}}) {
    std::size_t previous = tiles;
    for (std::size_t t = 0; t < tasks; ++t) {
      const std::size_t begin = linear_task_begin(t, tasks, tiles), end = linear_task_begin(t + 1, tasks, tiles);
      EXPECT_EQ(begin % 2, 0u) << "task " << t;
      EXPECT_LE(end - begin, previous + 2) << "task " << t;  // + 2: rounding to pairs
      previous = end - begin;
    }
    // The last is 1/tasks of an average task, the first nearly two (before rounding to pairs).
    EXPECT_LE(previous, tiles / tasks / 4 + 2) << "the last task should be a small share of the op";
    EXPECT_GE(linear_task_begin(1, tasks, tiles), tiles / tasks * 7 / 4) << "the first task streams longest";
  }
}

}  // namespace
}  // namespace kiln::runtime
