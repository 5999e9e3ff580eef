#include "runtime/gpu/gpu_kv_cache.hpp"

namespace kiln::runtime::gpu {

GpuKvCache::GpuKvCache(GpuContext& gpu, const models::KvCacheLayout& layout) {
  const auto slots = static_cast<std::uint64_t>(layout.num_blocks * layout.num_kv_heads * layout.block_size);
  const std::uint64_t data_bytes = element_bytes(layout.precision, slots * static_cast<std::uint64_t>(layout.head_dim));
  std::uint64_t param_bytes = 0;
  if (layout.precision == ElementType::kU8) {
    groups_ = (layout.head_dim + layout.u8_group_size - 1) / layout.u8_group_size;
    param_bytes = slots * static_cast<std::uint64_t>(groups_) * 2 * sizeof(float);
  }
  if (data_bytes > gpu.info().max_allocation_bytes) {
    fail(
        "KV cache: one layer's keys take {} bytes ({} blocks of {} tokens), more than the {} bytes {} allows in one "
        "buffer; ask for fewer blocks or a smaller context",
        data_bytes, layout.num_blocks, layout.block_size, gpu.info().max_allocation_bytes, gpu.info().name);
  }
  gpu_call("allocating the KV cache on " + gpu.info().name, [&] {
    layers_.resize(static_cast<std::size_t>(layout.num_layers));
    for (GpuKvLayer& l : layers_) {
      l.keys = cl::Buffer(gpu.context(), CL_MEM_READ_WRITE, data_bytes);
      l.values = cl::Buffer(gpu.context(), CL_MEM_READ_WRITE, data_bytes);
      if (param_bytes > 0) {
        l.key_params = cl::Buffer(gpu.context(), CL_MEM_READ_WRITE, param_bytes);
        l.value_params = cl::Buffer(gpu.context(), CL_MEM_READ_WRITE, param_bytes);
      }
    }
  });
  bytes_ = 2 * static_cast<std::uint64_t>(layout.num_layers) * (data_bytes + param_bytes);
}

}  // namespace kiln::runtime::gpu
