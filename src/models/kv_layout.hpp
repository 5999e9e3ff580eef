// Shape and precision of the paged KV cache a backend allocates: per layer, K and V each
// [num_blocks, num_kv_heads, block_size, head_dim].
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::models {

enum class KvPrecision : std::uint8_t { kF32, kF16, kBF16, kU8 };

// The name users write for a precision (properties, CLI flags): "f32", "f16", "bf16", "u8".
constexpr std::string_view kv_precision_name(KvPrecision precision) {
  switch (precision) {
    case KvPrecision::kF32: return "f32";
    case KvPrecision::kF16: return "f16";
    case KvPrecision::kBF16: return "bf16";
    case KvPrecision::kU8: return "u8";
  }
  return "unknown";
}

struct KvCacheLayout {
  std::int64_t num_layers = 0;
  std::int64_t num_blocks = 0;
  std::int64_t block_size = 16;  // tokens per block
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  KvPrecision precision = KvPrecision::kF32;
  std::int64_t u8_group_size = 32;  // u8 only: one scale and zero point per this many values

  std::int64_t num_tokens() const { return num_blocks * block_size; }
};

// One whole-block copy in the paged KV cache (every layer, keys and values): how a forked
// sequence (a beam) gets a private copy of a block it shares before writing into it.
struct KvBlockCopy {
  std::int64_t src = 0;
  std::int64_t dst = 0;
};

}  // namespace kiln::models
