#include "export/float_products.hpp"

#include <algorithm>

#include "export/x86/float_products_avx2.hpp"
#include "export/x86/float_products_avx512.hpp"
#include "runtime/thread_pool.hpp"

namespace kiln::exporter {
namespace {

constexpr std::size_t kRowsPerTask = 32;  // C rows per parallel task (a multiple of the 8-row tile)

}  // namespace

void accumulate_product_scalar(const FloatProduct& p) {
  for (std::size_t i = 0; i < p.m; ++i) {
    float* c = p.c + i * p.ldc;
    for (std::size_t k = 0; k < p.k; ++k) {
      const float a = p.a[i * p.a_row_stride + k * p.a_k_stride];
      const float* b = p.b + k * p.ldb;
      for (std::size_t j = 0; j < p.n; ++j) c[j] += a * b[j];
    }
  }
}

void accumulate_product(const FloatProduct& p, Isa isa) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return;
  if (isa >= Isa::kAvx512) {
    avx512::accumulate_product(p);
  } else if (isa >= Isa::kAvx2) {
    avx2::accumulate_product(p);
  } else {
    accumulate_product_scalar(p);
  }
}

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

void accumulate_product_parallel(const FloatProduct& p, ThreadPool* pool) {
  const std::size_t tasks = (p.m + kRowsPerTask - 1) / kRowsPerTask;
  run_tasks(pool, tasks, [&](std::size_t task, std::size_t) {
    FloatProduct part = p;
    const std::size_t first = task * kRowsPerTask;
    part.m = std::min(kRowsPerTask, p.m - first);
    part.a = p.a + first * p.a_row_stride;
    part.c = p.c + first * p.ldc;
    accumulate_product(part, product_isa());
  });
}

}  // namespace kiln::exporter
