// A persistent worker pool for the token path. parallel_for wakes the workers with one atomic
// store, the calling thread works too, and the call returns after one barrier. Waiting threads
// spin briefly (a decode step issues an op every few microseconds) and then sleep on a futex, so
// an idle pool costs nothing. Invariant: no heap allocation per call.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

// The CPUs this process may run on (its affinity mask as the process started, not as a pinned
// thread sees it now).
const std::vector<int>& allowed_cpus();

// The calling thread's CPU affinity, read now and put back by restore() (on the same thread). A
// pinned pool narrows the thread that builds it to one CPU: right for a thread that then steps
// the model, wrong for one that hands the model to an engine thread and goes on serving (every
// thread it starts would inherit the one CPU).
class SavedThreadAffinity {
 public:
  SavedThreadAffinity();
  void restore() const;

 private:
  cpu_set_t mask_;
  bool valid_ = false;
};

struct ThreadPoolOptions {
  std::size_t num_threads = 0;  // including the caller; 0 = the CPUs this process may run on
  bool pin_threads = false;     // pin thread i (caller = 0) to the i-th allowed CPU
  std::uint32_t spin_us = 200;  // how long a waiting thread spins before it sleeps
};

class ThreadPool {
 public:
  explicit ThreadPool(ThreadPoolOptions options = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run tasks, the caller included.
  std::size_t num_threads() const { return workers_.size() + 1; }

  // Runs fn(task, thread) for every task in [0, num_tasks) and returns when all have finished.
  // Tasks are claimed dynamically, so a thread that wakes late takes fewer; `thread` is in
  // [0, num_threads()) and unique among concurrently running tasks (for per-thread scratch).
  // The first exception a task throws is rethrown here after the others finish. Called from
  // inside a task, it runs the tasks inline on that thread (no nested parallelism).
  // Not reentrant from several outside threads at once: one pool serves one caller.
  template <typename Fn>
  void parallel_for(std::size_t num_tasks, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    run(num_tasks, const_cast<void*>(static_cast<const void*>(&fn)),
        [](void* ctx, std::size_t task, std::size_t thread) { (*static_cast<F*>(ctx))(task, thread); });
  }

 private:
  using TaskFn = void (*)(void* ctx, std::size_t task, std::size_t thread);

  void run(std::size_t num_tasks, void* ctx, TaskFn fn);
  void worker_loop(std::size_t thread, const std::vector<int>& cpus);
  void stop_workers();  // wakes, joins and forgets every worker
  // Claims and runs tasks of job `generation` until none is left.
  void drain_tasks(std::size_t thread, std::uint32_t generation);
  // Returns once `value` differs from `old`: spins for options_.spin_us, then sleeps on it.
  void wait_while_equal(std::atomic<std::uint32_t>& value, std::uint32_t old, std::atomic<std::uint32_t>& sleepers);

  ThreadPoolOptions options_;
  std::vector<std::thread> workers_;

  // The job: written by the caller before it publishes a new generation, after closing claim_.
  // Atomic because a worker late from the previous job may read them while they change; its
  // claim then fails (claim_ was closed first) and it discards what it read.
  std::atomic<void*> ctx_{nullptr};
  std::atomic<TaskFn> fn_{nullptr};
  std::atomic<std::uint32_t> num_tasks_{0};

  // alignas: the counters bounce between cores; keep each on its own cache line.
  // claim_ = generation << 32 | next task: a task is claimed by CAS, so only workers of the
  // current job can claim, and completion waits for claimed tasks only, never for a worker the
  // OS has not scheduled yet (the caller then runs the tasks itself).
  alignas(64) std::atomic<std::uint64_t> claim_{0};
  alignas(64) std::atomic<std::uint32_t> generation_{0};  // bumped per job; workers wait on it
  alignas(64) std::atomic<std::uint32_t> done_tasks_{0};  // tasks of the current job finished
  // Threads asleep on generation_ / done_tasks_: a notify (a syscall) is only paid when > 0.
  alignas(64) std::atomic<std::uint32_t> sleeping_workers_{0};
  std::atomic<std::uint32_t> sleeping_callers_{0};
  std::atomic<bool> stop_{false};

  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace kiln
