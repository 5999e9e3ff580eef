// Paged attention for one layer of a step on the thread pool. Work is split into tasks of
// (query row, KV head): each attends the row's GQA group of query heads to every position it may
// see, reading K and V once for the group. When there are too few rows and KV heads to keep every
// thread busy (one decoding sequence, few KV heads, long context) the positions are split into
// ranges whose partial softmax states are merged afterwards. Prefill rows go in blocks of
// consecutive rows per KV head (attend_rows), so each K/V chunk is decoded once for the block.
#pragma once

#include <span>
#include <vector>

#include "kernels/paged_attention.hpp"
#include "models/ops.hpp"

namespace kiln {
class ThreadPool;
}

namespace kiln::runtime {

class AttentionRunner {
 public:
  // min_split_positions: a context range is never shorter than this (smaller ranges cost more
  // in merging than they gain in parallelism).
  AttentionRunner(const kernels::AttentionKernels& kernels, ThreadPool& pool, std::int64_t min_split_positions = 256);

  // out [rows, num_heads, head_dim] = causal attention of q (same shape) over each sequence's
  // cached keys and values (models::Ops::attention).
  void run(const kernels::PagedKv& kv, const float* q, std::int64_t num_heads,
           std::span<const models::AttentionSequence> sequences, float scale, float* out);

 private:
  struct Task {
    std::int64_t row;  // in the batch
    std::int64_t kv_head;
    std::int64_t begin, end;  // positions
    std::int64_t slot;        // partial-state slot when the row's context is split, else -1
    const std::int32_t* block_table;
    std::int64_t rows;  // > 0: a block of rows from `row` on (attend_rows; end = row's context)
  };

  std::int64_t splits_for(std::int64_t units, std::int64_t context) const;
  // Rows per attend_rows task for this sequence, or 0 to attend row by row.
  std::int64_t block_rows(const models::AttentionSequence& s, std::int64_t group, std::int64_t head_dim) const;

  kernels::AttendFn attend_;
  kernels::AttendRowsFn attend_rows_;  // null: the ISA has no blocked kernel
  ThreadPool& pool_;
  std::int64_t min_split_positions_;
  std::vector<Task> tasks_;       // reserved for the most a step of its rows can make, then reused
  std::vector<float> stats_;      // [tasks, 2, group]: max and sum of each task
  std::vector<float> split_acc_;  // [split slots, group, head_dim]
};

}  // namespace kiln::runtime
