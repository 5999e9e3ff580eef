// Scalar reference for causal attention over a paged f32 KV cache: the oracle for every
// vectorised attention kernel. Keys and values of one layer are [num_blocks, num_kv_heads,
// block_size, head_dim]; a sequence's position p lives in block block_table[p / block_size].
#pragma once

#include <cstdint>
#include <span>

namespace kiln::kernels::reference {

struct PagedKvF32 {
  const float* keys = nullptr;    // [num_blocks, num_kv_heads, block_size, head_dim]
  const float* values = nullptr;  // same shape
  std::int64_t block_size = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
};

// One sequence: q/out [rows, num_heads, head_dim]; row i sits at position p = num_cached + i and
// attends to positions [0, p], or (p - window, p] when window > 0 (HF's sliding-window mask).
// GQA: head h uses KV head h / (num_heads / num_kv_heads).
void paged_attention(const float* q, std::int64_t rows, std::int64_t num_cached, std::int64_t num_heads,
                     std::span<const std::int32_t> block_table, const PagedKvF32& kv, float scale, float* out,
                     std::int64_t window = 0);

}  // namespace kiln::kernels::reference
