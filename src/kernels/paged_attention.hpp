// The ISA-free interface of the paged-attention kernels: K/V rows stored as f32, f16, bf16 or
// group-wise u8, read through a sequence's block table, and one query row's heads of a GQA group
// attended over a range of positions with an online softmax. A call returns the unnormalised
// partial state (running max, sum of exponentials, weighted sum of values), so a caller may split
// a long context into ranges, run them on different threads and merge (merge_attention_partials).
// Every ISA's kernels have a scalar twin (reference/paged_attention.cpp) that they are tested against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/cpu_isa.hpp"
#include "util/element_type.hpp"

namespace kiln::kernels {

// One layer's paged keys and values.
struct PagedKv {
  // How one K or V element is stored: f32, f16, bf16 or u8 (is_kv_precision). u8 is asymmetric
  // per group of `group_size` consecutive elements of one head's row: x ≈ code * scale + min,
  // with (scale, min) as two f32 per group.
  ElementType element = ElementType::kF32;
  const std::uint8_t* keys = nullptr;    // [num_blocks, num_kv_heads, block_size, head_dim] elements
  const std::uint8_t* values = nullptr;  // same
  const float* key_params = nullptr;     // u8 only: [num_blocks, num_kv_heads, block_size, groups, 2]
  const float* value_params = nullptr;   // (scale, min) per group; same shape
  std::int64_t block_size = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t group_size = 0;  // u8 only; divides nothing in particular: the last group may be short
  std::int64_t groups = 0;      // ceil(head_dim / group_size) for u8, else 0
};

// The query heads of one row that share a KV head, and the positions they attend to.
struct AttentionQuery {
  const float* q = nullptr;    // [num_heads, head_dim]: heads kv_head * G .. kv_head * G + G - 1
  std::int64_t num_heads = 0;  // G, the heads in this GQA group
  std::int64_t kv_head = 0;
  const std::int32_t* block_table = nullptr;  // covers positions [0, end)
  std::int64_t begin = 0, end = 0;            // positions [begin, end), end > begin
  float scale = 1.0f;                         // applied to q·k before the softmax
};

// The softmax state of `num_heads` heads after some positions (unnormalised):
//   max[h] = max score, sum[h] = Σ exp(score - max[h]), acc[h] = Σ exp(score - max[h]) · v.
struct AttentionPartial {
  float* max = nullptr;  // [num_heads]
  float* sum = nullptr;  // [num_heads]
  float* acc = nullptr;  // [num_heads, head_dim]
};

using AttendFn = void (*)(const PagedKv& kv, const AttentionQuery& query, const AttentionPartial& out);

// Writes one head's row x [count] into a K or V row at dst (count elements of `element`);
// for u8, params receives (scale, min) for each of ceil(count / group_size) groups.
using EncodeKvFn = void (*)(const float* x, std::size_t count, ElementType element, std::size_t group_size,
                            std::uint8_t* dst, float* params);

// Consecutive query rows of one sequence that share a KV head (prefill), attended causally:
// row i holds the GQA group's heads at q + i * q_row_stride and sees positions
// [0, first_end + i). The result is written normalised (the finished attention output).
struct AttentionRows {
  const float* q = nullptr;       // row i: [num_heads, head_dim] at q + i * q_row_stride
  std::int64_t q_row_stride = 0;  // floats
  std::int64_t rows = 0;
  std::int64_t num_heads = 0;  // G; rows * num_heads <= kMaxAttentionRowQueries
  std::int64_t kv_head = 0;
  const std::int32_t* block_table = nullptr;  // covers positions [0, first_end + rows - 1)
  std::int64_t first_end = 0;                 // row 0's context length, >= 1
  float scale = 1.0f;
  float* out = nullptr;  // row i: [num_heads, head_dim] at out + i * out_row_stride
  std::int64_t out_row_stride = 0;
};

// Limits of AttendRowsFn: queries per call and the head size its chunk buffers hold.
inline constexpr std::int64_t kMaxAttentionRowQueries = 64;
inline constexpr std::int64_t kMaxAttentionRowsHeadDim = 256;

// Decodes each chunk of K and V rows once for all the rows' queries; null where an ISA has
// none (the caller attends row by row).
using AttendRowsFn = void (*)(const PagedKv& kv, const AttentionRows& rows);

struct AttentionKernels {
  AttendFn attend = nullptr;
  EncodeKvFn encode = nullptr;
  AttendRowsFn attend_rows = nullptr;
};

// The kernels for `isa` (scalar for Isa::kScalar; the avx512 ones also serve amx).
AttentionKernels find_attention_kernels(Isa isa);

// Folds partial b into a (same heads): the state after both position ranges.
void merge_attention_partials(const AttentionPartial& a, const AttentionPartial& b, std::int64_t num_heads,
                              std::int64_t head_dim);

// out [num_heads, head_dim] = acc / sum: the attention output of a complete partial.
void finish_attention(const AttentionPartial& p, std::int64_t num_heads, std::int64_t head_dim, float* out);

}  // namespace kiln::kernels
