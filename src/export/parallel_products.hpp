// The export's products over a thread pool: tasks split by rows of C, each C row computed by
// one thread in k order (kernels/float_products.hpp), so no result depends on the thread count.
#pragma once

#include <functional>

#include "kernels/float_products.hpp"

namespace kiln {
class ThreadPool;
}

namespace kiln::exporter {

// The threads `pool` runs (1 without one).
std::size_t thread_count(const ThreadPool* pool);

// Runs fn(task, thread) for task in [0, num_tasks) on `pool` (null: in order on this thread);
// `thread` < thread_count(pool) indexes per-thread scratch.
void run_tasks(ThreadPool* pool, std::size_t num_tasks, const std::function<void(std::size_t, std::size_t)>& fn);

// The ISA the export's products use on this machine (detected once).
Isa product_isa();

// C += A·B with rows of C split over `pool` (null: this thread).
void accumulate_product_parallel(const kernels::FloatProduct& p, ThreadPool* pool);

}  // namespace kiln::exporter
