// ThreadPool: generation-counter wake-up, tasks claimed by CAS on (generation, next task), and
// completion counted in finished tasks. Ordering: the job fields are published by the release
// store of claim_; task results by each finisher's increment of done_tasks_. A waiter announces
// itself in a sleepers counter before its final check, and a notifier checks that counter after
// its store, so one of the two always sees the other (no lost wake-up).
#include "runtime/thread_pool.hpp"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <system_error>

#include "util/error.hpp"
#include "util/log.hpp"

namespace kiln {
namespace {

thread_local bool t_inside_task = false;
thread_local std::size_t t_thread_index = 0;

std::vector<int> read_allowed_cpus() {
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

// Task index of a claim word whose job is being rewritten: above any task count.
constexpr std::uint64_t kClosedClaim = 0xFFFFFFFFu;

}  // namespace

// Read once, before any pool pins a thread: a pinned pool narrows its caller's own mask to one
// CPU, and a second pool built from that thread (a draft model's, a second pipeline's) would
// otherwise see one CPU.
const std::vector<int>& allowed_cpus() {
  static const std::vector<int> cpus = read_allowed_cpus();
  return cpus;
}

SavedThreadAffinity::SavedThreadAffinity() {
  CPU_ZERO(&mask_);
  valid_ = pthread_getaffinity_np(pthread_self(), sizeof(mask_), &mask_) == 0;
}

void SavedThreadAffinity::restore() const {
  if (valid_) pthread_setaffinity_np(pthread_self(), sizeof(mask_), &mask_);
}

ThreadPool::ThreadPool(ThreadPoolOptions options) : options_(options) {
  const std::vector<int> cpus = allowed_cpus();
  const std::size_t n = options_.num_threads ? options_.num_threads : cpus.size();
  if (options_.pin_threads) pin_current_thread(cpus[0]);
  workers_.reserve(n - 1);
  for (std::size_t i = 1; i < n; ++i) {
    try {
      workers_.emplace_back([this, i, cpus] { worker_loop(i, cpus); });
    } catch (const std::system_error& e) {  // the system's thread limit: stop the ones started
      stop_workers();
      fail(ErrorKind::kIo, "cannot start thread {} of the {} asked for (INFERENCE_NUM_THREADS): {}", i + 1, n,
           e.what());
    }
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
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
    drain_tasks(thread, seen);
  }
}

void ThreadPool::drain_tasks(std::size_t thread, std::uint32_t generation) {
  const bool was_inside = t_inside_task;
  t_inside_task = true;
  t_thread_index = thread;
  for (;;) {
    std::uint64_t claim = claim_.load(std::memory_order_acquire);
    if (static_cast<std::uint32_t>(claim >> 32) != generation) break;
    const std::uint32_t task = static_cast<std::uint32_t>(claim);
    // Read before the CAS: if it succeeds the job cannot have finished (this task was open),
    // so the caller had not begun rewriting these fields.
    const std::uint32_t num_tasks = num_tasks_.load(std::memory_order_relaxed);
    TaskFn fn = fn_.load(std::memory_order_relaxed);
    void* ctx = ctx_.load(std::memory_order_relaxed);
    // If any field read above was written for a later job, the caller's release fence (after it
    // closed claim_) now happens-before the CAS below, which therefore fails.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (task >= num_tasks) break;
    if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel)) continue;
    try {
      fn(ctx, task, thread);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (done_tasks_.fetch_add(1) + 1 == num_tasks &&  // seq_cst: pairs with the sleeper check
        sleeping_callers_.load() > 0) {
      done_tasks_.notify_all();
    }
  }
  t_inside_task = was_inside;
}

void ThreadPool::run(std::size_t num_tasks, void* ctx, TaskFn fn) {
  if (num_tasks == 0) return;
  if (workers_.empty() || num_tasks == 1 || t_inside_task) {
    const std::size_t thread = t_inside_task ? t_thread_index : 0;
    for (std::size_t task = 0; task < num_tasks; ++task) fn(ctx, task, thread);
    return;
  }
  KILN_DASSERT(num_tasks < kClosedClaim);
  const std::uint32_t n = static_cast<std::uint32_t>(num_tasks);
  const std::uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
  // Close the claim word before rewriting the job: a worker late from the previous job (it
  // loaded that job's exhausted claim, then was preempted) may read the new fields, and its CAS
  // on the old claim value must then fail; without this it could claim task n_old of the new job
  // before it is published, and the extra finish would leave done_tasks_ past n forever.
  claim_.store((std::uint64_t{generation} << 32) | kClosedClaim, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // pairs with the fence in drain_tasks
  ctx_.store(ctx, std::memory_order_relaxed);
  fn_.store(fn, std::memory_order_relaxed);
  num_tasks_.store(n, std::memory_order_relaxed);
  done_tasks_.store(0, std::memory_order_relaxed);
  claim_.store(std::uint64_t{generation} << 32, std::memory_order_release);
  generation_.store(generation);
  if (sleeping_workers_.load() > 0) generation_.notify_all();

  drain_tasks(0, generation);

  for (std::uint32_t done = done_tasks_.load(std::memory_order_acquire); done != n;
       done = done_tasks_.load(std::memory_order_acquire)) {
    wait_while_equal(done_tasks_, done, sleeping_callers_);
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace kiln
