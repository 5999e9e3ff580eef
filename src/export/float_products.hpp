// The float products the export's statistics and searches are made of: C += A·B over a row
// panel, with A read through strides so one kernel forms Xᵀ X (an input's Hessian, A = Xᵀ read
// from X's rows) and D·H or D·Xᵀ (AWQ's output error, A = D). AVX2 and AVX-512 kernels and a
// scalar twin; each C element is summed over k in order: the kernels agree bit for bit (one FMA
// chain each) and differ from the twin only by fused rounding.
#pragma once

#include <functional>

#include "export/float_product.hpp"
#include "kernels/cpu_isa.hpp"

namespace kiln {
class ThreadPool;
}

namespace kiln::exporter {

// C += A·B on this thread with the best kernel `isa` allows (kAvx2: AVX2 + FMA, kAvx512 and above: AVX-512).
void accumulate_product(const FloatProduct& p, Isa isa);

// The scalar twin: c[i, j] += a(i, 0)·b[0, j] + a(i, 1)·b[1, j] + ... in k order, unfused.
void accumulate_product_scalar(const FloatProduct& p);

// The threads `pool` runs (1 without one).
std::size_t thread_count(const ThreadPool* pool);

// Runs fn(task, thread) for task in [0, num_tasks) on `pool` (null: in order on this thread);
// `thread` < thread_count(pool) indexes per-thread scratch.
void run_tasks(ThreadPool* pool, std::size_t num_tasks, const std::function<void(std::size_t, std::size_t)>& fn);

// The ISA the export's products use on this machine (detected once).
Isa product_isa();

// C += A·B with rows of C split over `pool` (null: this thread). Each C row is computed by one
// thread in k order, so the result does not depend on the thread count.
void accumulate_product_parallel(const FloatProduct& p, ThreadPool* pool);

}  // namespace kiln::exporter
