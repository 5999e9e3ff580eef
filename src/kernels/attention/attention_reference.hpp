// Scalar twins of the paged-attention kernels: the oracle every ISA's attend / encode is tested
// against. They compute in double (two passes over the positions: exact max, then the sums) and
// read K/V elements through the same decoding the vector kernels must reproduce.
#pragma once

#include "kernels/attention/paged_attention.hpp"

namespace kiln::kernels::reference {

void attend(const PagedKv& kv, const AttentionQuery& query, const AttentionPartial& out);

// u8: per group, scale = (max - min) / 255 and code = round_half_even((x - min) / scale) clamped
// to [0, 255] (computed as (x - min) * (1 / scale) in f32; a constant group stores scale 0).
void encode_kv(const float* x, std::size_t count, KvElement element, std::size_t group_size, std::uint8_t* dst,
               float* params);

// dst [count] = a stored K or V row decoded to f32 (params: u8 only).
void decode_kv(const std::uint8_t* src, std::size_t count, KvElement element, std::size_t group_size,
               const float* params, float* dst);

}  // namespace kiln::kernels::reference
