// linear() on the thread pool: the input is quantised to int8 once for every target that takes
// int8 activations, then the output rows (weight tiles) of all targets form one index space that
// the threads claim in ranges (linear_task_count), so Q/K/V or gate/up cost one wake-up and one
// barrier together.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "kernels/matmul.hpp"
#include "models/ops.hpp"
#include "runtime/cpu/cpu_weight.hpp"

namespace kiln {
class ThreadPool;
}

namespace kiln::runtime {

// The tasks linear() splits `tiles` weight tiles (`bytes` in all) into for `threads` threads:
// contiguous tile ranges claimed dynamically, at least a few per thread and about 2 MiB of
// weights each on average, so both threads keep streaming until the op ends.
std::size_t linear_task_count(std::size_t tiles, std::size_t bytes, std::size_t threads);

// The first tile of task `task` (task == tasks gives `tiles`): ranges that shrink along the index
// space (the k-th boundary at tiles · (1 − (1 − k/tasks)²), on an even tile), so the threads finish
// an op together instead of one waiting out the other's last long task. The first tasks are long:
// enough for the prefill GEMM's next-tile-pair prefetch, and for decode one long stream for the
// hardware prefetcher (twice the average task); the last are a tile pair or two.
std::size_t linear_task_begin(std::size_t task, std::size_t tasks, std::size_t tiles);

class LinearRunner {
 public:
  // act_group_size: DYNAMIC_QUANTIZATION_GROUP_SIZE (used by int8-mode matrices only).
  LinearRunner(Isa isa, std::size_t act_group_size, ThreadPool& pool);

  void run(const float* x, std::int64_t rows, std::span<const models::LinearTarget> targets);

 private:
  struct Job {
    const BoundMatrix* matrix;
    kernels::MatmulFn fn;
    kernels::MatmulArgs args;
    std::size_t first_tile;
  };
  static constexpr std::size_t kMaxTargets = 4;

  const kernels::QuantizedActivations& quantize(const float* x, std::size_t rows, std::size_t in);

  kernels::QuantizeActivationsFn quantize_;
  std::size_t act_group_size_;
  ThreadPool& pool_;
  // Per input width: a buffer for as many rows as the largest step so far.
  struct Buffer {
    std::size_t in = 0, rows = 0;
    std::unique_ptr<kernels::ActivationBuffer> storage;
  };
  std::vector<Buffer> buffers_;
  kernels::QuantizedActivations view_;
};

}  // namespace kiln::runtime
