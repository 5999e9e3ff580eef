// The walk of attend_rows that every vector ISA shares: 16-position K/V chunks in order, each
// decoded once and attended by every query (row × head of the GQA group) whose context reaches
// it, with the online softmax's running max and sum per query, then each output divided by its
// sum. The ISA unit supplies its chunk type and three steps. Static inline, like
// kv_row_address.hpp: each ISA's translation unit keeps its own copy compiled with its flags.
#pragma once

#include "kernels/paged_attention.hpp"

namespace kiln::kernels::rows_walk {

// decode(where, p0, count, chunk): positions [p0, p0 + count) of the KV head into chunk.
// attend(chunk, q, head_dim, valid, scale, max, sum, acc): one query over the first `valid`.
// normalise(acc, head_dim, inverse_sum): acc *= inverse_sum.
template <class Chunk, long kPositionsPerPass, class Decode, class Attend, class Normalise>
static inline void attend_rows_walk(const PagedKv& kv, const AttentionRows& a, Decode decode, Attend attend,
                                    Normalise normalise) {
  const long hd = kv.head_dim, heads = a.num_heads, queries = a.rows * a.num_heads;
  float max[kMaxAttentionRowQueries], sum[kMaxAttentionRowQueries];
  for (long t = 0; t < queries; ++t) {
    max[t] = -__builtin_inff();
    sum[t] = 0.0f;
    float* acc = a.out + (t / heads) * a.out_row_stride + (t % heads) * hd;
    for (long i = 0; i < hd; ++i) acc[i] = 0.0f;
  }
  const AttentionQuery where{nullptr, heads, a.kv_head, a.block_table, 0, 0, a.scale};
  Chunk chunk;
  const long last_end = a.first_end + a.rows - 1;
  for (long p0 = 0; p0 < last_end; p0 += kPositionsPerPass) {
    const long count = last_end - p0 < kPositionsPerPass ? last_end - p0 : kPositionsPerPass;
    decode(where, p0, count, chunk);
    // Rows whose context ends before p0 see none of the chunk.
    const long first_row = p0 >= a.first_end ? p0 - a.first_end + 1 : 0;
    for (long r = first_row; r < a.rows; ++r) {
      const long end = a.first_end + r, valid = end - p0 < count ? end - p0 : count;
      for (long h = 0; h < heads; ++h) {
        const long t = r * heads + h;
        attend(chunk, a.q + r * a.q_row_stride + h * hd, hd, valid, a.scale, max[t], sum[t],
               a.out + r * a.out_row_stride + h * hd);
      }
    }
  }
  for (long t = 0; t < queries; ++t)
    normalise(a.out + (t / heads) * a.out_row_stride + (t % heads) * hd, hd, 1.0f / sum[t]);
}

}  // namespace kiln::kernels::rows_walk
