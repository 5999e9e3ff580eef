// Oracle: kernels/reference/paged_attention (scalar f32, double accumulation) over the same
// f32 KV cache. The runner's task split — per (row, KV head), and with context ranges merged
// when rows and KV heads are too few for the threads — must not change the result beyond f32
// rounding, for any thread count, split length, GQA ratio, ragged batch or ISA; nor must the
// blocks of prefill rows attended together (attend_rows), nor a sliding window (the reference
// skips positions <= p - window, HF's mask).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "kernels/paged_attention.hpp"
#include "kernels/reference/paged_attention.hpp"
#include "runtime/cpu/attention_runner.hpp"
#include "runtime/thread_pool.hpp"

namespace kiln::runtime {
namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Scenario {
  std::int64_t kv_heads, group, head_dim, block_size;
  std::vector<std::pair<std::int64_t, std::int64_t>> sequences;  // (num_cached, num_rows)
  std::int64_t window = 0;
};

void check(const Scenario& s, Isa isa, std::size_t threads, std::int64_t min_split) {
  const std::int64_t heads = s.kv_heads * s.group, hd = s.head_dim;
  std::int64_t rows = 0, blocks_total = 0;
  for (auto [cached, n] : s.sequences) {
    rows += n;
    blocks_total += (cached + n + s.block_size - 1) / s.block_size;
  }
  const std::vector<float> keys = random_values(blocks_total * s.kv_heads * s.block_size * hd, 1);
  const std::vector<float> values = random_values(keys.size(), 2);
  const std::vector<float> q = random_values(rows * heads * hd, 3);
  // Each sequence owns a shuffled set of blocks.
  std::vector<std::int32_t> ids(static_cast<std::size_t>(blocks_total));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(4));
  std::vector<models::AttentionSequence> seqs;
  std::int64_t row = 0, next_block = 0;
  for (auto [cached, n] : s.sequences) {
    const std::int64_t blocks = (cached + n + s.block_size - 1) / s.block_size;
    seqs.push_back({row, n, cached, std::span<const std::int32_t>(ids).subspan(next_block, blocks), s.window});
    row += n;
    next_block += blocks;
  }
  std::vector<float> want(q.size()), got(q.size(), NAN);
  const kernels::PagedKv ref =
      kernels::reference::f32_paged_kv(keys.data(), values.data(), s.block_size, s.kv_heads, hd);
  for (const auto& seq : seqs) {
    kernels::reference::paged_attention(q.data() + seq.row_begin * heads * hd, seq.num_rows, seq.num_cached, heads,
                                        seq.block_table, ref, 0.3f, want.data() + seq.row_begin * heads * hd,
                                        seq.window);
  }
  kernels::PagedKv kv;
  kv.keys = reinterpret_cast<const std::uint8_t*>(keys.data());
  kv.values = reinterpret_cast<const std::uint8_t*>(values.data());
  kv.block_size = s.block_size;
  kv.num_kv_heads = s.kv_heads;
  kv.head_dim = hd;
  ThreadPool pool(ThreadPoolOptions{.num_threads = threads});
  AttentionRunner runner(kernels::find_attention_kernels(isa), pool, min_split);
  runner.run(kv, q.data(), heads, seqs, 0.3f, got.data());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 3e-5f * std::max(1.0f, std::fabs(want[i])))
        << "index " << i << " isa " << isa_name(isa) << " threads " << threads << " min split " << min_split;
  }
}

TEST(AttentionRunner, SplitsAndBatchesMatchTheF32Reference) {
  const std::vector<Scenario> scenarios = {
      {8, 4, 64, 16, {{150, 1}}},                // one decoding sequence (Llama-3.2-1B shape)
      {1, 4, 16, 4, {{700, 1}}},                 // one KV head, long context: split along it
      {2, 3, 48, 7, {{0, 9}, {40, 1}, {3, 5}}},  // ragged batch: prefill, decode, chunk
      {1, 1, 80, 16, {{1000, 2}}},
      {2, 4, 64, 16, {{0, 37}}},          // prefill in row blocks (AVX-512 attend_rows)
      {3, 2, 40, 5, {{21, 19}, {0, 1}}},  // blocks after a cached prefix; head_dim % 16 != 0
      {1, 32, 16, 8, {{5, 6}}},           // 32 heads per KV head: 2 rows per block
      {1, 4, 16, 4, {{700, 1}}, 300},     // sliding window: split ranges start inside the context
      {2, 4, 64, 16, {{0, 37}}, 10},      // windowed prefill: row by row, not attend_rows
      {2, 3, 48, 7, {{0, 9}, {40, 1}, {3, 5}}, 6},
      {2, 4, 64, 16, {{0, 8}}, 10},  // window wider than the context: blocks as before
  };
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    for (std::size_t threads : {1, 2, 3}) {
      for (std::int64_t min_split : {1, 16, 256}) {
        for (const Scenario& s : scenarios) check(s, isa, threads, min_split);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::runtime
