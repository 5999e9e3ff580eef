#include "eval/kv_budget.hpp"

#include "util/error.hpp"

namespace kiln::eval {

ElementType parse_kv_precision_flag(std::string_view name) {
  const std::optional<ElementType> precision = parse_kv_precision(name);
  if (!precision) fail("--kv-precision '{}' is not a KV cache precision (accepted: f32, f16, bf16, u8)", name);
  return *precision;
}

std::uint64_t kv_bytes_per_token(const ir::ModelConfig& config, const KvFormat& format) {
  const auto head_dim = static_cast<std::uint64_t>(config.head_dim);
  // One token's key (or value) vector of one KV head.
  std::uint64_t head_bytes = element_bytes(format.precision, head_dim);
  if (format.precision == ElementType::kU8) {
    if (format.group_size <= 0) fail("--kv-group-size must be positive, got {}", format.group_size);
    const auto group = static_cast<std::uint64_t>(format.group_size);
    head_bytes += (head_dim + group - 1) / group * kU8KvParamBytesPerGroup;
  }
  return 2 * static_cast<std::uint64_t>(config.num_layers) * static_cast<std::uint64_t>(config.num_kv_heads) *
         head_bytes;
}

}  // namespace kiln::eval
