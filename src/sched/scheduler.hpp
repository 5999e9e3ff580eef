// The scheduler decides, each step, how many new tokens every unfinished sequence processes:
// {sequence: num_tokens}. There are no prefill and decode phases: a long prompt is cut into
// chunks that share a step with other sequences' single decode tokens, within a token budget.
// It reserves the KV blocks each chunk needs (with private copies of blocks a forked sequence
// shares and would write) and, when the pool runs dry, preempts the newest sequence (its blocks
// are freed and it will recompute). A sequence holding no blocks (new, or preempted) is admitted
// only while the pool keeps a watermark of free blocks after its chunk, so a new prompt never
// forces a running sequence out; waiting sequences are admitted first come, first served, so
// none starves. It never touches tensors.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "kiln/scheduler_config.hpp"
#include "kv/block_table.hpp"

namespace kiln::sched {

using SchedulerConfig = kiln::SchedulerConfig;  // the public struct (include/kiln/)

// A sequence as the scheduler sees it.
struct SchedulableSequence {
  std::int64_t num_tokens = 0;    // tokens known: prompt + generated
  std::int64_t num_computed = 0;  // of those, tokens whose keys and values are cached
  kv::BlockTable* blocks = nullptr;
  // Not admitted yet (new, or preempted): it has computed nothing since it (re)started. It may
  // hold blocks already: a cached prefix it found.
  bool waiting = false;
};

struct ScheduledChunk {
  std::size_t sequence = 0;  // index into the schedule() argument
  std::int64_t num_tokens = 0;
};

struct ScheduleOutput {
  std::vector<ScheduledChunk> chunks;  // in the order given
  std::vector<std::size_t> preempted;  // blocks released; the caller resets num_computed to 0
  // Copy-on-write: block contents the backend must copy, in this order, before the step.
  std::vector<kv::BlockCopy> copies;
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerConfig config);

  // `sequences` are in arrival order; earlier ones are served first and preempted last.
  ScheduleOutput schedule(std::span<SchedulableSequence> sequences);

  const SchedulerConfig& config() const { return config_; }

  // Free blocks admission leaves in the pool while any sequence runs: 1% of it, at least one.
  static std::int64_t watermark_blocks(std::int64_t num_blocks) { return std::max<std::int64_t>(1, num_blocks / 100); }

 private:
  SchedulerConfig config_;
};

}  // namespace kiln::sched
