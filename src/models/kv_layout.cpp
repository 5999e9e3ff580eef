#include "models/kv_layout.hpp"

namespace kiln::models {

std::uint64_t KvCacheLayout::bytes_per_token() const {
  const auto dim = static_cast<std::uint64_t>(head_dim);
  std::uint64_t head_bytes = element_bytes(precision, dim);
  if (precision == ElementType::kU8 && u8_group_size > 0) {
    const auto group = static_cast<std::uint64_t>(u8_group_size);
    head_bytes += (dim + group - 1) / group * 2 * sizeof(float);
  }
  return 2 * static_cast<std::uint64_t>(num_layers) * static_cast<std::uint64_t>(num_kv_heads) * head_bytes;
}

}  // namespace kiln::models
