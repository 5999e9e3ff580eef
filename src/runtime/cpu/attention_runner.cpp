#include "runtime/cpu/attention_runner.hpp"

#include <algorithm>

#include "runtime/thread_pool.hpp"

namespace kiln::runtime {

AttentionRunner::AttentionRunner(kernels::AttendFn attend, ThreadPool& pool, std::int64_t min_split_positions)
    : attend_(attend), pool_(pool), min_split_positions_(std::max<std::int64_t>(1, min_split_positions)) {}

std::int64_t AttentionRunner::splits_for(std::int64_t units, std::int64_t context) const {
  // Aim for a few tasks per thread, so threads that wake late still find work.
  const auto target = static_cast<std::int64_t>(4 * pool_.num_threads());
  if (units >= target) return 1;
  const std::int64_t wanted = (target + units - 1) / units;
  return std::clamp<std::int64_t>(context / min_split_positions_, 1, wanted);
}

void AttentionRunner::run(const kernels::PagedKv& kv, const float* q, std::int64_t num_heads,
                          std::span<const models::AttentionSequence> sequences, float scale, float* out) {
  const std::int64_t hd = kv.head_dim;
  const std::int64_t group = num_heads / kv.num_kv_heads;
  std::int64_t rows = 0;
  for (const models::AttentionSequence& s : sequences) rows += s.num_rows;
  const std::int64_t units = rows * kv.num_kv_heads;

  tasks_.clear();
  std::int64_t slots = 0;
  for (const models::AttentionSequence& s : sequences) {
    for (std::int64_t r = 0; r < s.num_rows; ++r) {
      const std::int64_t context = s.num_cached + r + 1;
      const std::int64_t splits = splits_for(units, context);
      for (std::int64_t h = 0; h < kv.num_kv_heads; ++h) {
        for (std::int64_t i = 0; i < splits; ++i) {
          tasks_.push_back({s.row_begin + r, h, context * i / splits, context * (i + 1) / splits,
                            splits > 1 ? slots++ : -1, s.block_table.data()});
        }
      }
    }
  }
  if (stats_.size() < tasks_.size() * 2 * group) stats_.resize(tasks_.size() * 2 * group);
  if (split_acc_.size() < static_cast<std::size_t>(slots * group * hd)) split_acc_.resize(slots * group * hd);

  const std::int64_t row_width = num_heads * hd;
  pool_.parallel_for(tasks_.size(), [&](std::size_t t, std::size_t) {
    const Task& task = tasks_[t];
    float* row_out = out + task.row * row_width + task.kv_head * group * hd;  // [group, head_dim]
    float* acc = task.slot < 0 ? row_out : split_acc_.data() + task.slot * group * hd;
    const kernels::AttentionPartial partial{stats_.data() + t * 2 * group, stats_.data() + t * 2 * group + group, acc};
    const kernels::AttentionQuery query{q + task.row * row_width + task.kv_head * group * hd, group, task.kv_head,
                                        task.block_table, task.begin, task.end, scale};
    attend_(kv, query, partial);
    if (task.slot < 0) kernels::finish_attention(partial, group, hd, row_out);
  });

  // Merge the ranges of each split (row, KV head): they are consecutive tasks.
  for (std::size_t t = 0; t < tasks_.size();) {
    if (tasks_[t].slot < 0) {
      ++t;
      continue;
    }
    const auto partial_of = [&](std::size_t i) {
      return kernels::AttentionPartial{stats_.data() + i * 2 * group, stats_.data() + i * 2 * group + group,
                                       split_acc_.data() + tasks_[i].slot * group * hd};
    };
    const kernels::AttentionPartial first = partial_of(t);
    std::size_t next = t + 1;
    for (; next < tasks_.size() && tasks_[next].row == tasks_[t].row && tasks_[next].kv_head == tasks_[t].kv_head &&
           tasks_[next].slot >= 0;
         ++next) {
      kernels::merge_attention_partials(first, partial_of(next), group, hd);
    }
    kernels::finish_attention(first, group, hd, out + tasks_[t].row * row_width + tasks_[t].kv_head * group * hd);
    t = next;
  }
}

}  // namespace kiln::runtime
