// ThreadPool: generation-counter wake-up, dynamic task claiming, one completion barrier.
// Ordering: the job fields are published by the seq_cst bump of generation_; task results are
// published by each worker's decrement of busy_workers_. A waiter announces itself in a sleepers
// counter before its final check, and a notifier checks that counter after its store, so one of
// the two always sees the other (no lost wake-up).
#include "runtime/thread_pool.hpp"

#include <pthread.h>
#include <sched.h>

#include <chrono>

#include "util/log.hpp"

namespace kiln {
namespace {

thread_local bool t_inside_task = false;
thread_local std::size_t t_thread_index = 0;

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

void pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
    init_logging();
    spdlog::warn("thread pool: could not pin a thread to CPU {}; it runs unpinned", cpu);
  }
}

inline void cpu_relax() { __builtin_ia32_pause(); }

}  // namespace

ThreadPool::ThreadPool(ThreadPoolOptions options) : options_(options) {
  const std::vector<int> cpus = allowed_cpus();
  const std::size_t n = options_.num_threads ? options_.num_threads : cpus.size();
  if (options_.pin_threads) pin_current_thread(cpus[0]);
  workers_.reserve(n - 1);
  for (std::size_t i = 1; i < n; ++i) {
    workers_.emplace_back([this, i, cpus] { worker_loop(i, cpus); });
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::wait_while_equal(std::atomic<std::uint32_t>& value, std::uint32_t old,
                                  std::atomic<std::uint32_t>& sleepers) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::microseconds(options_.spin_us);
  for (std::uint32_t i = 1;; ++i) {
    if (value.load(std::memory_order_acquire) != old) return;
    cpu_relax();
    if ((i & 63) == 0 && Clock::now() >= deadline) break;
  }
  sleepers.fetch_add(1);
  while (value.load() == old) value.wait(old);
  sleepers.fetch_sub(1);
}

void ThreadPool::worker_loop(std::size_t thread, const std::vector<int>& cpus) {
  if (options_.pin_threads) pin_current_thread(cpus[thread % cpus.size()]);
  std::uint32_t seen = 0;  // the constructor posts nothing, so the first job is generation 1
  for (;;) {
    wait_while_equal(generation_, seen, sleeping_workers_);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    drain_tasks(thread);
    if (busy_workers_.fetch_sub(1) == 1 && sleeping_callers_.load() > 0) {
      busy_workers_.notify_all();
    }
  }
}

void ThreadPool::drain_tasks(std::size_t thread) {
  t_inside_task = true;
  t_thread_index = thread;
  for (;;) {
    const std::size_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= num_tasks_) break;
    try {
      fn_(ctx_, task, thread);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
  t_inside_task = false;
}

void ThreadPool::run(std::size_t num_tasks, void* ctx, TaskFn fn) {
  if (num_tasks == 0) return;
  if (workers_.empty() || num_tasks == 1 || t_inside_task) {
    const std::size_t thread = t_inside_task ? t_thread_index : 0;
    for (std::size_t task = 0; task < num_tasks; ++task) fn(ctx, task, thread);
    return;
  }
  ctx_ = ctx;
  fn_ = fn;
  num_tasks_ = num_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  busy_workers_.store(static_cast<std::uint32_t>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1);
  if (sleeping_workers_.load() > 0) generation_.notify_all();

  drain_tasks(0);

  for (std::uint32_t busy = busy_workers_.load(std::memory_order_acquire); busy != 0;
       busy = busy_workers_.load(std::memory_order_acquire)) {
    wait_while_equal(busy_workers_, busy, sleeping_callers_);
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace kiln
