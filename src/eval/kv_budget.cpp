#include "eval/kv_budget.hpp"

#include "util/error.hpp"

namespace kiln::eval {

ElementType parse_kv_precision_flag(std::string_view name) {
  const std::optional<ElementType> precision = parse_kv_precision(name);
  if (!precision) fail("--kv-precision '{}' is not a KV cache precision (accepted: f32, f16, bf16, u8)", name);
  return *precision;
}

std::uint64_t kv_bytes_per_token(const ir::ModelConfig& config, const KvFormat& format) {
  if (format.precision == ElementType::kU8 && format.group_size <= 0) {
    fail("--kv-group-size must be positive, got {}", format.group_size);
  }
  models::KvCacheLayout layout;
  layout.num_layers = config.num_layers;
  layout.num_kv_heads = config.num_kv_heads;
  layout.head_dim = config.head_dim;
  layout.precision = format.precision;
  layout.u8_group_size = format.group_size;
  return layout.bytes_per_token();
}

}  // namespace kiln::eval
