// The KV-cache half of `kiln budget`: bytes per token and for a context × sequences, at f32,
// f16, bf16 or u8. u8 stores one code per value plus, per group of `group_size` values of one
// token's head vector, an f32 scale and an f32 zero point (OpenVINO's CPU layout for
// KV_CACHE_PRECISION=u8, group size KV_CACHE_GROUP_SIZE, default 32).
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/model_config.hpp"
#include "models/kv_layout.hpp"

namespace kiln::eval {

struct KvFormat {
  ElementType precision = ElementType::kF16;
  std::int64_t group_size = 32;  // u8 only
};

// "f32", "f16", "bf16", "u8"; anything else is a kiln::Error listing them.
ElementType parse_kv_precision_flag(std::string_view name);

// Keys and values of every layer for one token: 2 · layers · kv_heads · bytes(head_dim).
// Throws kiln::Error for a non-positive u8 group size.
std::uint64_t kv_bytes_per_token(const ir::ModelConfig& config, const KvFormat& format);

}  // namespace kiln::eval
