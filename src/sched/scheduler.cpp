#include "sched/scheduler.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace kiln::sched {

Scheduler::Scheduler(SchedulerConfig config) : config_(config) {
  if (config_.max_num_batched_tokens <= 0) {
    fail("SchedulerConfig: max_num_batched_tokens must be positive, got {}", config_.max_num_batched_tokens);
  }
  if (config_.max_num_seqs <= 0) fail("SchedulerConfig: max_num_seqs must be positive, got {}", config_.max_num_seqs);
}

ScheduleOutput Scheduler::schedule(std::span<SchedulableSequence> sequences) {
  ScheduleOutput out;
  std::int64_t budget = config_.max_num_batched_tokens;
  const auto holds_blocks = [&](std::size_t i) { return !sequences[i].blocks->blocks().empty(); };
  const bool any_running =
      std::any_of(sequences.begin(), sequences.end(), [](const SchedulableSequence& s) { return !s.waiting; });
  bool admitting = true;  // false once a waiting sequence could not be admitted: the later ones wait too

  for (std::size_t i = 0; i < sequences.size() && budget > 0; ++i) {
    if (static_cast<std::int32_t>(out.chunks.size()) == config_.max_num_seqs) break;
    SchedulableSequence& s = sequences[i];
    const std::int64_t want = s.num_tokens - s.num_computed;
    if (want <= 0) continue;
    if (s.waiting && !admitting) continue;
    // Without split-fuse a chunk is all the sequence wants, unless no step could ever hold it.
    if (!config_.dynamic_split_fuse && want > budget &&
        !(out.chunks.empty() && want > config_.max_num_batched_tokens)) {
      if (s.waiting) admitting = false;
      continue;
    }
    const std::int64_t take = std::min(want, budget);
    if (s.waiting && any_running) {
      const kv::BlockPool& pool = s.blocks->pool();
      const std::int64_t block_size = s.blocks->block_size();
      const std::int64_t needed =
          (s.num_computed + take + block_size - 1) / block_size - static_cast<std::int64_t>(s.blocks->blocks().size());
      if (pool.num_free() - needed < watermark_blocks(pool.num_blocks())) {
        admitting = false;
        continue;
      }
    }
    const auto reserve = [&] { return s.blocks->reserve_for_write(s.num_computed, s.num_computed + take, out.copies); };
    bool reserved = reserve();
    while (!reserved) {
      // Free the newest sequence that still holds blocks. Only newer ones (j > i) qualify, so
      // nothing already scheduled this step is touched; a freed one may be rescheduled below.
      std::size_t victim = sequences.size();
      for (std::size_t j = sequences.size(); j-- > i + 1;) {
        if (holds_blocks(j)) {
          victim = j;
          break;
        }
      }
      if (victim == sequences.size()) break;
      sequences[victim].blocks->clear();
      sequences[victim].num_computed = 0;
      out.preempted.push_back(victim);
      reserved = reserve();
    }
    if (!reserved) break;  // this one waits; later ones are newer and would wait too
    out.chunks.push_back({i, take});
    budget -= take;
  }
  return out;
}

}  // namespace kiln::sched
