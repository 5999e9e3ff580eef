#include "runtime/cpu/attention_runner.hpp"

#include <algorithm>
#include <limits>

#include "runtime/thread_pool.hpp"

namespace kiln::runtime {

namespace {

// A sequence step with fewer rows (decode, short verification) attends row by row.
constexpr std::int64_t kMinBlockRows = 4;
// Rows per block: enough queries to amortise decoding a K/V chunk, few enough that a prefill
// still makes several tasks per KV head.
constexpr std::int64_t kMaxBlockRows = 16;

}  // namespace

AttentionRunner::AttentionRunner(const kernels::AttentionKernels& kernels, ThreadPool& pool,
                                 std::int64_t min_split_positions)
    : attend_(kernels.attend),
      attend_rows_(kernels.attend_rows),
      pool_(pool),
      min_split_positions_(std::max<std::int64_t>(1, min_split_positions)) {}

std::int64_t AttentionRunner::block_rows(const models::AttentionSequence& s, std::int64_t group,
                                         std::int64_t head_dim) const {
  if (!attend_rows_ || s.num_rows < kMinBlockRows || head_dim > kernels::kMaxAttentionRowsHeadDim) return 0;
  // The blocked kernel starts every row at position 0: rows whose window cuts the context go row by row.
  if (s.window > 0 && s.num_cached + s.num_rows > s.window) return 0;
  const std::int64_t rows = std::min(kMaxBlockRows, kernels::kMaxAttentionRowQueries / group);
  return rows >= 2 ? rows : 0;
}

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

  // Scratch for the most tasks and split slots these rows can make at any context length: a
  // row's splits grow with its context (up to splits_for's cap), and decode must not allocate as
  // a sequence grows.
  const std::int64_t most_splits = splits_for(units, std::numeric_limits<std::int64_t>::max());
  const auto most_tasks = static_cast<std::size_t>(units * most_splits);
  const auto most_slots = static_cast<std::size_t>(most_splits > 1 ? units * most_splits : 0);
  tasks_.clear();
  tasks_.reserve(most_tasks);
  if (stats_.size() < most_tasks * 2 * group) stats_.resize(most_tasks * 2 * group);
  if (split_acc_.size() < most_slots * group * hd) split_acc_.resize(most_slots * group * hd);
  std::int64_t slots = 0;
  for (const models::AttentionSequence& s : sequences) {
    if (const std::int64_t block = block_rows(s, group, hd); block > 0) {
      // Latest rows first: they see the most positions, so the long tasks start early.
      for (std::int64_t r1 = s.num_rows; r1 > 0; r1 -= block) {
        const std::int64_t r0 = std::max<std::int64_t>(0, r1 - block);
        for (std::int64_t h = 0; h < kv.num_kv_heads; ++h) {
          tasks_.push_back({s.row_begin + r0, h, 0, s.num_cached + r0 + 1, -1, s.block_table.data(), r1 - r0});
        }
      }
      continue;
    }
    for (std::int64_t r = 0; r < s.num_rows; ++r) {
      const std::int64_t end = s.num_cached + r + 1;
      const std::int64_t begin = s.window > 0 ? std::max<std::int64_t>(0, end - s.window) : 0;  // [begin, end)
      const std::int64_t context = end - begin;
      const std::int64_t splits = splits_for(units, context);
      for (std::int64_t h = 0; h < kv.num_kv_heads; ++h) {
        for (std::int64_t i = 0; i < splits; ++i) {
          tasks_.push_back({s.row_begin + r, h, begin + context * i / splits, begin + context * (i + 1) / splits,
                            splits > 1 ? slots++ : -1, s.block_table.data(), 0});
        }
      }
    }
  }

  const std::int64_t row_width = num_heads * hd;
  pool_.parallel_for(tasks_.size(), [&](std::size_t t, std::size_t) {
    const Task& task = tasks_[t];
    float* row_out = out + task.row * row_width + task.kv_head * group * hd;  // [group, head_dim]
    if (task.rows > 0) {
      attend_rows_(
          kv, kernels::AttentionRows{q + task.row * row_width + task.kv_head * group * hd, row_width, task.rows, group,
                                     task.kv_head, task.block_table, task.end, scale, row_out, row_width});
      return;
    }
    float* acc = task.slot < 0 ? row_out : split_acc_.data() + task.slot * group * hd;
    const kernels::AttentionPartial partial{stats_.data() + t * 2 * group, stats_.data() + t * 2 * group + group, acc};
    const kernels::AttentionQuery query{q + task.row * row_width + task.kv_head * group * hd,
                                        group,
                                        task.kv_head,
                                        task.block_table,
                                        task.begin,
                                        task.end,
                                        scale};
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
