// Oracles: every task runs exactly once per call and its writes are visible after the call
// (counting), thread indices are unique among concurrently running tasks, a task's exception
// reaches the caller, and parallel_for allocates nothing (a counting global operator new).
#include "runtime/thread_pool.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {
std::atomic<std::size_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace kiln {
namespace {

TEST(ThreadPool, EveryTaskRunsExactlyOnce) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3});
  EXPECT_EQ(pool.num_threads(), 3u);
  for (std::size_t num_tasks : {0u, 1u, 2u, 3u, 7u, 100u, 1000u}) {
    std::vector<int> runs(num_tasks, 0);  // plain ints: the barrier must publish them
    for (int repeat = 0; repeat < 200; ++repeat) {
      pool.parallel_for(num_tasks, [&](std::size_t task, std::size_t) { ++runs[task]; });
    }
    for (std::size_t t = 0; t < num_tasks; ++t) ASSERT_EQ(runs[t], 200) << "task " << t;
  }
}

// Regression: a worker late from a job with fewer tasks must not claim a task of the next,
// larger job before it is published (that ran a task twice and left the caller waiting for
// ever). Growing task counts back to back, more threads than cores, so workers get preempted
// between loading the claim word and claiming.
TEST(ThreadPool, GrowingJobsRunEachTaskOnceAndReturn) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 4, .spin_us = 0});
  std::vector<std::atomic<int>> runs(64);
  for (int repeat = 0; repeat < 20000; ++repeat) {
    const std::size_t num_tasks = 1 + static_cast<std::size_t>(repeat) % runs.size();
    for (std::size_t t = 0; t < num_tasks; ++t) runs[t].store(0, std::memory_order_relaxed);
    pool.parallel_for(num_tasks, [&](std::size_t task, std::size_t) {
      ASSERT_LT(task, num_tasks);
      runs[task].fetch_add(1, std::memory_order_relaxed);
    });
    for (std::size_t t = 0; t < num_tasks; ++t) ASSERT_EQ(runs[t].load(), 1) << "job " << repeat << " task " << t;
  }
}

TEST(ThreadPool, ThreadIndicesAreUniqueWhileRunning) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 4});
  std::vector<std::atomic<int>> in_use(pool.num_threads());
  std::atomic<int> violations{0};
  for (int repeat = 0; repeat < 100; ++repeat) {
    pool.parallel_for(64, [&](std::size_t, std::size_t thread) {
      if (thread >= in_use.size() || in_use[thread].fetch_add(1) != 0) ++violations;
      std::this_thread::yield();
      if (thread < in_use.size()) in_use[thread].fetch_sub(1);
    });
  }
  EXPECT_EQ(violations.load(), 0);
}

TEST(ThreadPool, ExceptionReachesCallerAndPoolSurvives) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.parallel_for(50,
                                 [&](std::size_t task, std::size_t) {
                                   ++ran;
                                   if (task == 17) throw std::runtime_error("task 17");
                                 }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 50);  // the other tasks still ran
  std::atomic<int> after{0};
  pool.parallel_for(10, [&](std::size_t, std::size_t) { ++after; });
  EXPECT_EQ(after.load(), 10);
}

TEST(ThreadPool, NestedCallRunsInline) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  std::vector<std::atomic<int>> hits(8 * 8);
  pool.parallel_for(8, [&](std::size_t outer, std::size_t thread) {
    pool.parallel_for(8, [&](std::size_t inner, std::size_t inner_thread) {
      if (inner_thread == thread) ++hits[outer * 8 + inner];
    });
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

// spin_us = 0: every wait goes to sleep, so every job exercises the futex wake-up path.
TEST(ThreadPool, SleepingWorkersWake) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3, .spin_us = 0});
  for (int repeat = 0; repeat < 50; ++repeat) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::atomic<int> count{0};
    pool.parallel_for(9, [&](std::size_t, std::size_t) { ++count; });
    ASSERT_EQ(count.load(), 9);
  }
}

TEST(ThreadPool, ParallelForDoesNotAllocate) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  std::vector<double> out(256);
  pool.parallel_for(256, [&](std::size_t task, std::size_t) { out[task] = 1.0; });  // warm-up
  const std::size_t before = g_allocations.load();
  for (int repeat = 0; repeat < 1000; ++repeat) {
    pool.parallel_for(256, [&](std::size_t task, std::size_t) { out[task] += 1.0; });
  }
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_EQ(out[255], 1001.0);
}

// Thread i runs on the i-th CPU this process may use; the caller's affinity is restored after.
TEST(ThreadPool, PinnedThreadsRunOnTheirCpu) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &original)) cpus.push_back(c);
  }
  {
    ThreadPool pool(ThreadPoolOptions{.num_threads = cpus.size(), .pin_threads = true});
    std::vector<std::atomic<int>> wrong(pool.num_threads());
    pool.parallel_for(64, [&](std::size_t, std::size_t thread) {
      if (sched_getcpu() != cpus[thread % cpus.size()]) ++wrong[thread];
    });
    for (auto& w : wrong) EXPECT_EQ(w.load(), 0);
  }
  sched_setaffinity(0, sizeof(original), &original);
}

// Pinning narrows the caller's affinity to one CPU; a pool built after it (a draft model's, a
// second pipeline's, from the same thread) still gets a thread for every CPU of the process.
TEST(ThreadPool, APoolBuiltAfterAPinnedOneUsesEveryCpu) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  const auto cpus = static_cast<std::size_t>(CPU_COUNT(&original));
  {
    ThreadPool first(ThreadPoolOptions{.num_threads = 0, .pin_threads = true});
    ThreadPool second(ThreadPoolOptions{.num_threads = 0, .pin_threads = true});
    EXPECT_EQ(first.num_threads(), cpus);
    EXPECT_EQ(second.num_threads(), cpus);
  }
  sched_setaffinity(0, sizeof(original), &original);
}

}  // namespace
}  // namespace kiln
