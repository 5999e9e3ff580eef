#include "runtime/cpu/paged_kv_store.hpp"

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace kiln::runtime {

PagedKvStore::PagedKvStore(const models::KvCacheLayout& layout, kernels::EncodeKvFn encode)
    : layout_(layout), encode_(encode) {
  const models::KvCacheLayout& l = layout;
  if (l.num_layers <= 0 || l.num_blocks <= 0 || l.block_size <= 0 || l.num_kv_heads <= 0 || l.head_dim <= 0) {
    fail("KV cache layout: every size must be positive (layers {}, blocks {}, block size {}, KV heads {}, head dim {})",
         l.num_layers, l.num_blocks, l.block_size, l.num_kv_heads, l.head_dim);
  }
  if (l.precision == ElementType::kU8) {
    // The vector kernels decode 16 values at a time, all from one group.
    if (l.u8_group_size <= 0 || (l.u8_group_size < l.head_dim && l.u8_group_size % 16 != 0)) {
      fail(
          "KV_CACHE_GROUP_SIZE {} is not supported for head_dim {} (accepted: a positive multiple of 16, or at "
          "least head_dim for one group per row)",
          l.u8_group_size, l.head_dim);
    }
    group_size_ = std::min(l.u8_group_size, l.head_dim);
    groups_ = (l.head_dim + group_size_ - 1) / group_size_;
  }
  const auto positions = static_cast<std::size_t>(l.num_kv_heads * l.block_size);  // per block
  row_bytes_ = static_cast<std::size_t>(l.head_dim) * element_bytes(l.precision);
  param_row_floats_ = static_cast<std::size_t>(groups_) * 2;
  block_bytes_ = positions * row_bytes_;
  block_param_bytes_ = positions * param_row_floats_ * sizeof(float);
  const auto blocks = static_cast<std::size_t>(l.num_blocks);
  const std::size_t layer_bytes = 2 * blocks * (block_bytes_ + block_param_bytes_);
  std::size_t offset = 0;
  for (std::int64_t i = 0; i < l.num_layers; ++i) {
    LayerOffsets o;
    o.keys = offset;
    o.values = o.keys + blocks * block_bytes_;
    o.key_params = o.values + blocks * block_bytes_;
    o.value_params = o.key_params + blocks * block_param_bytes_;
    offsets_.push_back(o);
    offset += layer_bytes;
  }
  memory_ = AnonymousMemory(offset, /*huge_pages=*/false);
}

kernels::PagedKv PagedKvStore::layer(std::int64_t layer) const {
  const LayerOffsets& o = offsets_[static_cast<std::size_t>(layer)];
  kernels::PagedKv kv;
  kv.element = layout_.precision;
  kv.keys = at(o.keys);
  kv.values = at(o.values);
  if (groups_ > 0) {
    kv.key_params = reinterpret_cast<const float*>(at(o.key_params));
    kv.value_params = reinterpret_cast<const float*>(at(o.value_params));
  }
  kv.block_size = layout_.block_size;
  kv.num_kv_heads = layout_.num_kv_heads;
  kv.head_dim = layout_.head_dim;
  kv.group_size = group_size_;
  kv.groups = groups_;
  return kv;
}

void PagedKvStore::store(std::int64_t layer, const float* k, const float* v, std::span<const std::int64_t> slots,
                         std::size_t row_begin, std::size_t row_end) {
  const LayerOffsets& o = offsets_[static_cast<std::size_t>(layer)];
  const auto hd = static_cast<std::size_t>(layout_.head_dim);
  const auto heads = static_cast<std::size_t>(layout_.num_kv_heads);
  const auto bs = static_cast<std::size_t>(layout_.block_size);
  float* key_params = reinterpret_cast<float*>(at(o.key_params));
  float* value_params = reinterpret_cast<float*>(at(o.value_params));
  for (std::size_t r = row_begin; r < row_end; ++r) {
    const auto slot = static_cast<std::size_t>(slots[r]);
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t row = ((slot / bs) * heads + h) * bs + slot % bs;  // [block, head, offset]
      const std::size_t src = (r * heads + h) * hd;
      encode_(k + src, hd, layout_.precision, static_cast<std::size_t>(group_size_), at(o.keys + row * row_bytes_),
              key_params + row * param_row_floats_);
      encode_(v + src, hd, layout_.precision, static_cast<std::size_t>(group_size_), at(o.values + row * row_bytes_),
              value_params + row * param_row_floats_);
    }
  }
}

void PagedKvStore::copy_blocks(std::span<const models::KvBlockCopy> copies) {
  for (const models::KvBlockCopy& c : copies) {
    if (c.src < 0 || c.src >= layout_.num_blocks || c.dst < 0 || c.dst >= layout_.num_blocks) {
      fail(ErrorKind::kInternal, "KV block copy {} -> {} is outside the cache's {} blocks", c.src, c.dst,
           layout_.num_blocks);
    }
    const auto src = static_cast<std::size_t>(c.src), dst = static_cast<std::size_t>(c.dst);
    for (const LayerOffsets& o : offsets_) {
      std::memcpy(at(o.keys + dst * block_bytes_), at(o.keys + src * block_bytes_), block_bytes_);
      std::memcpy(at(o.values + dst * block_bytes_), at(o.values + src * block_bytes_), block_bytes_);
      if (block_param_bytes_ == 0) continue;
      std::memcpy(at(o.key_params + dst * block_param_bytes_), at(o.key_params + src * block_param_bytes_),
                  block_param_bytes_);
      std::memcpy(at(o.value_params + dst * block_param_bytes_), at(o.value_params + src * block_param_bytes_),
                  block_param_bytes_);
    }
  }
}

}  // namespace kiln::runtime
