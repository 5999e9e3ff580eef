#include "export/parallel_products.hpp"

#include <algorithm>

#include "runtime/thread_pool.hpp"

namespace kiln::exporter {
namespace {

constexpr std::size_t kRowsPerTask = 32;  // C rows per parallel task (a multiple of the 8-row tile)

}  // namespace

std::size_t thread_count(const ThreadPool* pool) { return pool ? pool->num_threads() : 1; }

void run_tasks(ThreadPool* pool, std::size_t num_tasks, const std::function<void(std::size_t, std::size_t)>& fn) {
  if (pool == nullptr || num_tasks < 2) {
    for (std::size_t t = 0; t < num_tasks; ++t) fn(t, 0);
    return;
  }
  pool->parallel_for(num_tasks, fn);
}

Isa product_isa() {
  static const Isa isa = detected_isa();
  return isa;
}

void accumulate_product_parallel(const kernels::FloatProduct& p, ThreadPool* pool) {
  const std::size_t tasks = (p.m + kRowsPerTask - 1) / kRowsPerTask;
  run_tasks(pool, tasks, [&](std::size_t task, std::size_t) {
    kernels::FloatProduct part = p;
    const std::size_t first = task * kRowsPerTask;
    part.m = std::min(kRowsPerTask, p.m - first);
    part.a = p.a + first * p.a_row_stride;
    part.c = p.c + first * p.ldc;
    kernels::accumulate_product(part, product_isa());
  });
}

}  // namespace kiln::exporter
