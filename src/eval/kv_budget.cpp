#include "eval/kv_budget.hpp"

#include "util/error.hpp"

namespace kiln::eval {

models::KvPrecision parse_kv_precision(std::string_view name) {
  for (const auto p :
       {models::KvPrecision::kF32, models::KvPrecision::kF16, models::KvPrecision::kBF16, models::KvPrecision::kU8}) {
    if (kv_precision_name(p) == name) return p;
  }
  fail("--kv-precision '{}' is not a KV cache precision (accepted: f32, f16, bf16, u8)", name);
}

std::uint64_t kv_bytes_per_token(const ir::ModelConfig& config, const KvFormat& format) {
  const auto head_dim = static_cast<std::uint64_t>(config.head_dim);
  std::uint64_t head_bytes = 0;  // one token's key (or value) vector of one KV head
  switch (format.precision) {
    case models::KvPrecision::kF32: head_bytes = 4 * head_dim; break;
    case models::KvPrecision::kF16:
    case models::KvPrecision::kBF16: head_bytes = 2 * head_dim; break;
    case models::KvPrecision::kU8: {
      if (format.group_size <= 0) fail("--kv-group-size must be positive, got {}", format.group_size);
      const auto group = static_cast<std::uint64_t>(format.group_size);
      head_bytes = head_dim + (head_dim + group - 1) / group * kU8KvParamBytesPerGroup;
      break;
    }
  }
  return 2 * static_cast<std::uint64_t>(config.num_layers) * static_cast<std::uint64_t>(config.num_kv_heads) *
         head_bytes;
}

}  // namespace kiln::eval
