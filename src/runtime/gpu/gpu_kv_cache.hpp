// The paged KV cache in device memory, in the layout of kernels/paged_attention.hpp: per layer,
// keys and values [num_blocks, num_kv_heads, block_size, head_dim] of the cache's precision,
// and for u8 their (scale, min) per group [num_blocks, num_kv_heads, block_size, groups, 2].
#pragma once

#include <vector>

#include "models/kv_layout.hpp"
#include "runtime/gpu/gpu_context.hpp"

namespace kiln::runtime::gpu {

struct GpuKvLayer {
  cl::Buffer keys, values;
  cl::Buffer key_params, value_params;  // u8 only
};

class GpuKvCache {
 public:
  // Fails, naming the sizes, when a layer's buffer is larger than the device's largest buffer.
  GpuKvCache(GpuContext& gpu, const models::KvCacheLayout& layout);

  GpuKvLayer& layer(std::int64_t index) { return layers_[static_cast<std::size_t>(index)]; }
  std::int64_t groups() const { return groups_; }  // u8 groups per head row; 0 otherwise
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::int64_t groups_ = 0;
  std::uint64_t bytes_ = 0;
  std::vector<GpuKvLayer> layers_;
};

}  // namespace kiln::runtime::gpu
