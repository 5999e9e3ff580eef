// Scalar twins of the paged-attention kernels: the one oracle every ISA's attend / encode is
// tested against, and the attention of the REFERENCE device. They compute in double (two passes
// over the positions: exact max, then the sums) and read K/V elements through the same decoding
// the vector kernels must reproduce.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/paged_attention.hpp"

namespace kiln::kernels::reference {

void attend(const PagedKv& kv, const AttentionQuery& query, const AttentionPartial& out);

// u8: per group, scale = (max - min) / 255 and code = round_half_even((x - min) / scale) clamped
// to [0, 255] (computed as (x - min) * (1 / scale) in f32; a constant group stores scale 0).
void encode_kv(const float* x, std::size_t count, ElementType element, std::size_t group_size, std::uint8_t* dst,
               float* params);

// dst [count] = a stored K or V row decoded to f32 (params: u8 only).
void decode_kv(const std::uint8_t* src, std::size_t count, ElementType element, std::size_t group_size,
               const float* params, float* dst);

// An f32 cache (keys, values [num_blocks, num_kv_heads, block_size, head_dim]) as PagedKv.
inline PagedKv f32_paged_kv(const float* keys, const float* values, std::int64_t block_size, std::int64_t num_kv_heads,
                            std::int64_t head_dim) {
  return {.element = ElementType::kF32,
          .keys = reinterpret_cast<const std::uint8_t*>(keys),
          .values = reinterpret_cast<const std::uint8_t*>(values),
          .block_size = block_size,
          .num_kv_heads = num_kv_heads,
          .head_dim = head_dim};
}

// Causal attention of one sequence, normalised in double: q/out [rows, num_heads, head_dim]; row i
// sits at position p = num_cached + i and attends to positions [0, p], or (p - window, p] when
// window > 0 (HF's sliding-window mask). GQA: head h uses KV head h / (num_heads / num_kv_heads).
void paged_attention(const float* q, std::int64_t rows, std::int64_t num_cached, std::int64_t num_heads,
                     std::span<const std::int32_t> block_table, const PagedKv& kv, float scale, float* out,
                     std::int64_t window = 0);

}  // namespace kiln::kernels::reference
