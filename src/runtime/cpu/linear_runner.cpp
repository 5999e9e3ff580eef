#include "runtime/cpu/linear_runner.hpp"

#include <algorithm>

#include "models/host_ops.hpp"
#include "runtime/thread_pool.hpp"
#include "util/error.hpp"

namespace kiln::runtime {
namespace {

// Rows quantised per task: big enough to amortise a task, small enough to spread a prefill.
constexpr std::size_t kQuantizeRowsPerTask = 16;
// Average weight bytes per GEMV task (the ranges shrink along the op, linear_task_begin): ~0.1 ms
// of streaming, so a thread the host slows down holds the others up by about one task. Each task
// starts a new stream for the hardware prefetcher: with even tasks of 512 KiB a 1B model's decode
// token took 4% longer, of 128 KiB 17% longer (2 MiB to 16 MiB measured alike).
constexpr std::size_t kTaskBytes = std::size_t{2} << 20;

}  // namespace

std::size_t linear_task_count(std::size_t tiles, std::size_t bytes, std::size_t threads) {
  return std::min(tiles, std::max(threads * 4, bytes / kTaskBytes));
}

std::size_t linear_task_begin(std::size_t task, std::size_t tasks, std::size_t tiles) {
  if (task >= tasks) return tiles;
  const std::size_t left = tasks - task;
  return tiles * (tasks * tasks - left * left) / (tasks * tasks) / 2 * 2;
}

LinearRunner::LinearRunner(Isa isa, std::size_t act_group_size, ThreadPool& pool)
    : quantize_(kernels::find_quantize_activations(isa)), act_group_size_(act_group_size), pool_(pool) {}

const kernels::QuantizedActivations& LinearRunner::quantize(const float* x, std::size_t rows, std::size_t in) {
  auto it = std::find_if(buffers_.begin(), buffers_.end(), [&](const Buffer& b) { return b.in == in; });
  if (it == buffers_.end()) it = buffers_.insert(buffers_.end(), Buffer{in, 0, nullptr});
  if (it->rows < rows) {  // grows with the largest step seen, then stays
    it->storage = std::make_unique<kernels::ActivationBuffer>(rows, in, act_group_size_);
    it->rows = rows;
  }
  view_ = it->storage->view(rows);
  // Even tasks: a 26-row prompt quantises 13 + 13 rows on two threads, not 16 + 10.
  const std::size_t tasks = (rows + kQuantizeRowsPerTask - 1) / kQuantizeRowsPerTask;
  pool_.parallel_for(
      tasks, [&](std::size_t t, std::size_t) { quantize_(x, view_, rows * t / tasks, rows * (t + 1) / tasks); });
  return view_;
}

void LinearRunner::run(const float* x, std::int64_t rows, std::span<const models::LinearTarget> targets) {
  if (targets.empty() || rows <= 0) return;
  if (targets.size() > kMaxTargets)
    fail(ErrorKind::kInternal, "linear(): {} targets, at most {}", targets.size(), kMaxTargets);
  const auto n = static_cast<std::size_t>(rows);
  const kernels::QuantizedActivations* xq = nullptr;
  Job jobs[kMaxTargets];
  std::size_t tiles = 0, bytes = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const CpuWeight& w = as_cpu(*targets[i].weight);
    if (!w.matrix) fail(ErrorKind::kInternal, "linear(): a target's weight is not a matrix");
    const BoundMatrix& m = *w.matrix;
    if (m.mode == kernels::ActivationMode::kInt8 && xq == nullptr) xq = &quantize(x, n, m.packed.layout.in);
    const float* bias = targets[i].bias ? as_cpu(*targets[i].bias).values.data() : nullptr;
    jobs[i] = Job{&m, m.kernels.for_rows(n),
                  kernels::MatmulArgs{n, x, xq, models::host(targets[i].out), m.packed.layout.out, bias}, tiles};
    kernels::check_matmul_args(m.packed, jobs[i].args, m.mode, m.name);
    tiles += m.packed.layout.tiles;
    bytes += m.packed.layout.data_bytes + m.packed.layout.scales_bytes + m.packed.layout.zeros_bytes;
  }
  const std::size_t tasks = linear_task_count(tiles, bytes, pool_.num_threads());
  const std::size_t count = targets.size();
  pool_.parallel_for(tasks, [&](std::size_t task, std::size_t) {
    const std::size_t tile_begin = linear_task_begin(task, tasks, tiles);
    const std::size_t tile_end = linear_task_begin(task + 1, tasks, tiles);
    for (std::size_t i = 0; i < count; ++i) {
      const Job& j = jobs[i];
      const kernels::PackedLayout& l = j.matrix->packed.layout;
      const std::size_t begin = std::max(tile_begin, j.first_tile), end = std::min(tile_end, j.first_tile + l.tiles);
      if (begin >= end) continue;
      j.fn(j.matrix->packed, j.args, (begin - j.first_tile) * l.tile_rows,
           std::min(l.out, (end - j.first_tile) * l.tile_rows));
    }
  });
}

}  // namespace kiln::runtime
