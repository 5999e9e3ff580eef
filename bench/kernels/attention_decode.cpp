#include "attention_decode.hpp"

#include <chrono>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/paged_attention.hpp"
#include "runtime/cpu/attention_runner.hpp"

namespace kiln::bench {

void bench_attention_decode(benchmark::State& state, const AttentionDecodeConfig& c, Isa isa, ThreadPool& pool,
                            double stream_gbs) {
  constexpr std::int64_t kHeads = 32, kKvHeads = 8, kHeadDim = 64, kBlockSize = 16, kU8Group = 32;
  const kernels::AttentionKernels kernels = kernels::find_attention_kernels(isa);
  const std::int64_t blocks_per_sequence = (c.context + kBlockSize - 1) / kBlockSize;
  const std::int64_t blocks = c.sequences * blocks_per_sequence;
  const std::int64_t rows = blocks * kKvHeads * kBlockSize;  // K (or V) rows in the cache
  const auto row_bytes = static_cast<std::int64_t>(element_bytes(c.element, kHeadDim));
  const std::int64_t groups = c.element == ElementType::kU8 ? (kHeadDim + kU8Group - 1) / kU8Group : 0;

  // Random rows through the kernel's own encoder; blocks handed out shuffled, as a pool would.
  std::vector<std::uint8_t> keys(rows * row_bytes), values(rows * row_bytes);
  std::vector<float> key_params(rows * groups * 2), value_params(rows * groups * 2);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(kHeadDim);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (float& v : x) v = normal(rng);
    kernels.encode(x.data(), kHeadDim, c.element, kU8Group, keys.data() + r * row_bytes,
                   key_params.data() + r * groups * 2);
    for (float& v : x) v = normal(rng);
    kernels.encode(x.data(), kHeadDim, c.element, kU8Group, values.data() + r * row_bytes,
                   value_params.data() + r * groups * 2);
  }
  std::vector<std::int32_t> table(blocks);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), rng);

  kernels::PagedKv kv;
  kv.element = c.element;
  kv.keys = keys.data();
  kv.values = values.data();
  if (groups > 0) {
    kv.key_params = key_params.data();
    kv.value_params = value_params.data();
  }
  kv.block_size = kBlockSize;
  kv.num_kv_heads = kKvHeads;
  kv.head_dim = kHeadDim;
  kv.group_size = groups > 0 ? kU8Group : 0;
  kv.groups = groups;

  std::vector<models::AttentionSequence> sequences(c.sequences);
  for (std::int64_t s = 0; s < c.sequences; ++s) {
    sequences[s] = {s, 1, c.context - 1,
                    std::span<const std::int32_t>(table.data() + s * blocks_per_sequence, blocks_per_sequence)};
  }
  std::vector<float> q(c.sequences * kHeads * kHeadDim), out(q.size());
  for (float& v : q) v = normal(rng);
  runtime::AttentionRunner runner(kernels, pool);
  const float scale = 0.125f;
  runner.run(kv, q.data(), kHeads, sequences, scale, out.data());  // warm-up
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    runner.run(kv, q.data(), kHeads, sequences, scale, out.data());
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::DoNotOptimize(out.data());
  }
  const double layers = static_cast<double>(state.iterations());
  const double bytes = static_cast<double>(keys.size() + values.size()) +
                       4.0 * static_cast<double>(key_params.size() + value_params.size());
  const double gbs = bytes * layers / seconds / 1e9;
  state.counters["ms/layer"] = 1e3 * seconds / layers;
  state.counters["kv_GB/s"] = gbs;
  if (stream_gbs > 0) state.counters["roofline_%"] = 100.0 * gbs / stream_gbs;
}

}  // namespace kiln::bench
