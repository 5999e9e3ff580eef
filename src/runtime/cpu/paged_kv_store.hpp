// The compiled CPU model's paged KV cache: per layer, K and V [num_blocks, kv_heads, block_size,
// head_dim] in one element type (f32, f16, bf16, u8) and, for u8, a (scale, min) pair per group
// of KV_CACHE_GROUP_SIZE values. One anonymous mapping holds everything, so blocks never used
// never become resident.
#pragma once

#include <span>
#include <vector>

#include "kernels/paged_attention.hpp"
#include "models/kv_layout.hpp"
#include "runtime/cpu/memory_region.hpp"

namespace kiln {
class ThreadPool;
}

namespace kiln::runtime {

class PagedKvStore {
 public:
  // Throws kiln::Error naming KV_CACHE_GROUP_SIZE when a u8 group size is not a multiple of 16
  // shorter than head_dim.
  PagedKvStore(const models::KvCacheLayout& layout, kernels::EncodeKvFn encode);

  const models::KvCacheLayout& layout() const { return layout_; }
  kernels::PagedKv layer(std::int64_t layer) const;
  std::size_t bytes() const { return memory_.size(); }

  // Writes rows [row_begin, row_end) of k, v [rows, kv_heads, head_dim] at their slots
  // (slot = block * block_size + offset).
  void store(std::int64_t layer, const float* k, const float* v, std::span<const std::int64_t> slots,
             std::size_t row_begin, std::size_t row_end);

  // Block dst of every layer becomes a copy of block src, in order (Ops::copy_kv_blocks).
  void copy_blocks(std::span<const models::KvBlockCopy> copies);

 private:
  struct LayerOffsets {
    std::size_t keys, values, key_params, value_params;
  };
  std::uint8_t* at(std::size_t offset) const { return memory_.data() + offset; }

  models::KvCacheLayout layout_;
  kernels::EncodeKvFn encode_;
  std::int64_t group_size_ = 0, groups_ = 0;
  std::size_t row_bytes_ = 0, param_row_floats_ = 0;     // per (position, head)
  std::size_t block_bytes_ = 0, block_param_bytes_ = 0;  // per block of one layer's K (or V)
  std::vector<LayerOffsets> offsets_;
  AnonymousMemory memory_;
};

}  // namespace kiln::runtime
