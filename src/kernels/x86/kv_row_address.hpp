// Where a position's K and V rows live in the paged cache, and the dispatch of a GQA pass's
// head count to a template argument, shared by the vector attention translation units. Plain
// integer code, static inline: each ISA's translation unit keeps its own copy compiled with its
// own flags (no weak symbol for baseline code to bind to).
#pragma once

#include "kernels/paged_attention.hpp"

namespace kiln::kernels::kv_rows {

// The most query heads one attention pass takes; a larger GQA group goes in several passes.
inline constexpr long kMaxHeadsPerPass = 8;

static constexpr long bytes_per_element(ElementType e) {
  return e == ElementType::kF32 ? 4 : e == ElementType::kU8 ? 1 : 2;
}

template <int H>
struct HeadCount {
  static constexpr int value = H;
};

// Calls f(HeadCount<heads>{}) for heads in 1 .. kMaxHeadsPerPass, so a pass's accumulators can
// be arrays of a compile-time size (registers, not the stack).
template <class F>
static inline void with_head_count(long heads, F&& f) {
  static_assert(kMaxHeadsPerPass == 8, "one case per head count below");
  switch (heads) {
    case 1: f(HeadCount<1>{}); break;
    case 2: f(HeadCount<2>{}); break;
    case 3: f(HeadCount<3>{}); break;
    case 4: f(HeadCount<4>{}); break;
    case 5: f(HeadCount<5>{}); break;
    case 6: f(HeadCount<6>{}); break;
    case 7: f(HeadCount<7>{}); break;
    default: f(HeadCount<8>{}); break;
  }
}

// The K and V rows of one position for a query's KV head (u8: and their (scale, min) groups).
struct RowAddress {
  const std::uint8_t* keys;
  const std::uint8_t* values;
  const float* key_params;    // u8 only
  const float* value_params;  // u8 only
};

static inline RowAddress row_address(const PagedKv& kv, const AttentionQuery& q, long pos, long row_bytes) {
  const long block = q.block_table[pos / kv.block_size];
  const long row = (block * kv.num_kv_heads + q.kv_head) * kv.block_size + pos % kv.block_size;
  RowAddress a{kv.keys + row * row_bytes, kv.values + row * row_bytes, nullptr, nullptr};
  if (kv.key_params) {
    a.key_params = kv.key_params + row * kv.groups * 2;
    a.value_params = kv.value_params + row * kv.groups * 2;
  }
  return a;
}

}  // namespace kiln::kernels::kv_rows
