// Shape and precision of the paged KV cache a backend allocates: per layer, K and V each
// [num_blocks, num_kv_heads, block_size, head_dim].
#pragma once

#include <cstdint>

#include "util/element_type.hpp"

namespace kiln::models {

struct KvCacheLayout {
  std::int64_t num_layers = 0;
  std::int64_t num_blocks = 0;
  std::int64_t block_size = 16;  // tokens per block
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  ElementType precision = ElementType::kF32;  // a KV precision (is_kv_precision)
  std::int64_t u8_group_size = 32;            // u8 only: one scale and zero point per this many values

  std::int64_t num_tokens() const { return num_blocks * block_size; }
  // Keys and values of every layer for one token: 2 · layers · kv_heads · (head_dim values, and
  // for u8 an f32 scale and an f32 zero point per group of u8_group_size values).
  std::uint64_t bytes_per_token() const;
};

// One whole-block copy in the paged KV cache (every layer, keys and values): how a forked
// sequence (a beam) gets a private copy of a block it shares before writing into it.
struct KvBlockCopy {
  std::int64_t src = 0;
  std::int64_t dst = 0;
};

}  // namespace kiln::models
