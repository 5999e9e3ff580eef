// Where a position's K and V rows live in the paged cache, shared by the vector attention
// translation units. Plain integer code, static inline: each ISA's translation unit keeps its
// own copy compiled with its own flags (no weak symbol for baseline code to bind to).
#pragma once

#include "kernels/paged_attention.hpp"

namespace kiln::kernels::kv_rows {

// The K and V rows of one position for a query's KV head (u8: and their (scale, min) groups).
struct RowAddress {
  const std::uint8_t* keys;
  const std::uint8_t* values;
  const float* key_params;    // u8 only
  const float* value_params;  // u8 only
};

static inline RowAddress row_address(const PagedKv& kv, const AttentionQuery& q, long pos, long row_bytes) {
  const long block = q.block_table[pos / kv.block_size];
  const long row = (block * kv.num_kv_heads + q.kv_head) * kv.block_size + pos % kv.block_size;
  RowAddress a{kv.keys + row * row_bytes, kv.values + row * row_bytes, nullptr, nullptr};
  if (kv.key_params) {
    a.key_params = kv.key_params + row * kv.groups * 2;
    a.value_params = kv.value_params + row * kv.groups * 2;
  }
  return a;
}

}  // namespace kiln::kernels::kv_rows
