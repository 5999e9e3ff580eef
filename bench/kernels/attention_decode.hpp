// Decode attention as a continuous-batching step runs it: one query row per sequence, every
// sequence over its own paged K/V, through the runtime's AttentionRunner (Llama-3.2-1B's heads:
// 32 query heads over 8 KV heads of 64). Decode attention reads each sequence's K and V once, so
// its roofline is the streaming bandwidth.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>

#include "kernels/cpu_isa.hpp"
#include "util/element_type.hpp"

namespace kiln {
class ThreadPool;
}

namespace kiln::bench {

struct AttentionDecodeConfig {
  ElementType element;  // KV precision
  std::int64_t sequences;
  std::int64_t context;  // positions each sequence attends to
};

// Counters: ms per layer, K/V GB/s read, and with `stream_gbs` > 0 the share of it.
void bench_attention_decode(benchmark::State& state, const AttentionDecodeConfig& c, Isa isa, ThreadPool& pool,
                            double stream_gbs);

}  // namespace kiln::bench
