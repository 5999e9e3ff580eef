#include "kernels/reference/paged_attention.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::kernels::reference {

void paged_attention(const float* q, std::int64_t rows, std::int64_t num_cached, std::int64_t num_heads,
                     std::span<const std::int32_t> block_table, const PagedKvF32& kv, float scale, float* out,
                     std::int64_t window) {
  const std::int64_t hd = kv.head_dim;
  const std::int64_t group = num_heads / kv.num_kv_heads;
  auto at = [&](const float* base, std::int64_t pos, std::int64_t kv_head) {
    const std::int64_t block = block_table[static_cast<std::size_t>(pos / kv.block_size)];
    return base + ((block * kv.num_kv_heads + kv_head) * kv.block_size + pos % kv.block_size) * hd;
  };
  std::vector<double> scores;
  std::vector<double> acc(static_cast<std::size_t>(hd));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t context = num_cached + r + 1;
    const std::int64_t first = window > 0 ? std::max<std::int64_t>(0, context - window) : 0;
    scores.resize(static_cast<std::size_t>(context));
    for (std::int64_t h = 0; h < num_heads; ++h) {
      const float* qh = q + (r * num_heads + h) * hd;
      const std::int64_t kv_head = h / group;
      double max_score = -INFINITY;
      for (std::int64_t p = first; p < context; ++p) {
        const float* k = at(kv.keys, p, kv_head);
        double dot = 0.0;
        for (std::int64_t i = 0; i < hd; ++i) dot += double(qh[i]) * k[i];
        scores[p] = dot * scale;
        max_score = std::max(max_score, scores[p]);
      }
      double sum = 0.0;
      for (std::int64_t p = first; p < context; ++p) sum += (scores[p] = std::exp(scores[p] - max_score));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t p = first; p < context; ++p) {
        const float* v = at(kv.values, p, kv_head);
        for (std::int64_t i = 0; i < hd; ++i) acc[i] += scores[p] * v[i];
      }
      float* o = out + (r * num_heads + h) * hd;
      for (std::int64_t i = 0; i < hd; ++i) o[i] = static_cast<float>(acc[i] / sum);
    }
  }
}

}  // namespace kiln::kernels::reference
