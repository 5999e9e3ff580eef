#include "kernels/reference/paged_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "util/half.hpp"

namespace kiln::kernels::reference {
namespace {

// The address of position `pos`'s row for `kv_head` in a [num_blocks, kv_heads, block_size, X]
// array of `row_elements` per row of `element_bytes` each.
std::size_t row_index(const PagedKv& kv, const std::int32_t* block_table, std::int64_t pos) {
  const std::int64_t block = block_table[pos / kv.block_size];
  return static_cast<std::size_t>((block * kv.num_kv_heads) * kv.block_size + pos % kv.block_size);
}

void decode_row(const PagedKv& kv, const std::uint8_t* base, const float* params, std::size_t row, std::int64_t kv_head,
                float* dst) {
  const std::size_t hd = static_cast<std::size_t>(kv.head_dim);
  const std::size_t r = row + static_cast<std::size_t>(kv_head * kv.block_size);
  const std::size_t bytes = element_bytes(kv.element);
  decode_kv(base + r * hd * bytes, hd, kv.element, static_cast<std::size_t>(kv.group_size),
            params ? params + r * static_cast<std::size_t>(kv.groups) * 2 : nullptr, dst);
}

}  // namespace

void decode_kv(const std::uint8_t* src, std::size_t count, ElementType element, std::size_t group_size,
               const float* params, float* dst) {
  for (std::size_t i = 0; i < count; ++i) {
    switch (element) {
      case ElementType::kF32: std::memcpy(&dst[i], src + i * 4, 4); break;
      case ElementType::kF16: dst[i] = f16_to_f32(static_cast<std::uint16_t>(src[2 * i] | src[2 * i + 1] << 8)); break;
      case ElementType::kBf16:
        dst[i] = bf16_to_f32(static_cast<std::uint16_t>(src[2 * i] | src[2 * i + 1] << 8));
        break;
      case ElementType::kU8: {
        const float* p = params + (i / group_size) * 2;
        dst[i] = std::fma(static_cast<float>(src[i]), p[0], p[1]);
        break;
      }
      default: dst[i] = NAN; break;  // not a KV precision: PagedKv never holds one
    }
  }
}

void encode_kv(const float* x, std::size_t count, ElementType element, std::size_t group_size, std::uint8_t* dst,
               float* params) {
  if (element == ElementType::kF32) {
    std::memcpy(dst, x, count * 4);
    return;
  }
  if (element == ElementType::kF16 || element == ElementType::kBf16) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint16_t h = element == ElementType::kF16 ? f32_to_f16(x[i]) : f32_to_bf16(x[i]);
      dst[2 * i] = static_cast<std::uint8_t>(h);
      dst[2 * i + 1] = static_cast<std::uint8_t>(h >> 8);
    }
    return;
  }
  for (std::size_t g0 = 0, g = 0; g0 < count; g0 += group_size, ++g) {
    const std::size_t g1 = std::min(count, g0 + group_size);
    float lo = x[g0], hi = x[g0];
    for (std::size_t i = g0; i < g1; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    const float scale = (hi - lo) / 255.0f;
    const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
    for (std::size_t i = g0; i < g1; ++i) {
      const float code = std::nearbyint((x[i] - lo) * inverse);
      dst[i] = static_cast<std::uint8_t>(std::clamp(code, 0.0f, 255.0f));
    }
    params[2 * g] = scale;
    params[2 * g + 1] = lo;
  }
}

namespace {

// The exact softmax state of a query's GQA group over positions [query.begin, query.end):
// max[h], sum[h] = Σ exp(score - max[h]) and acc[h] = Σ exp(score - max[h]) · v, in double.
struct ExactPartial {
  std::vector<double> max, sum;  // [heads]
  std::vector<double> acc;       // [heads, head_dim]
};

ExactPartial attend_exact(const PagedKv& kv, const AttentionQuery& query) {
  const std::size_t hd = static_cast<std::size_t>(kv.head_dim);
  const std::int64_t positions = query.end - query.begin;
  std::vector<float> k(hd), v(hd);                                                    // [head_dim]
  std::vector<double> scores(static_cast<std::size_t>(positions * query.num_heads));  // [heads, positions]
  for (std::int64_t p = 0; p < positions; ++p) {
    const std::size_t row = row_index(kv, query.block_table, query.begin + p);
    decode_row(kv, kv.keys, kv.key_params, row, query.kv_head, k.data());
    for (std::int64_t h = 0; h < query.num_heads; ++h) {
      const float* q = query.q + h * kv.head_dim;
      double dot = 0.0;
      for (std::size_t i = 0; i < hd; ++i) dot += double(q[i]) * k[i];
      scores[h * positions + p] = dot * query.scale;
    }
  }
  ExactPartial r{std::vector<double>(static_cast<std::size_t>(query.num_heads), -INFINITY),
                 std::vector<double>(static_cast<std::size_t>(query.num_heads), 0.0),
                 std::vector<double>(static_cast<std::size_t>(query.num_heads) * hd, 0.0)};
  for (std::int64_t h = 0; h < query.num_heads; ++h) {
    for (std::int64_t p = 0; p < positions; ++p) r.max[h] = std::max(r.max[h], scores[h * positions + p]);
  }
  for (std::int64_t p = 0; p < positions; ++p) {
    const std::size_t row = row_index(kv, query.block_table, query.begin + p);
    decode_row(kv, kv.values, kv.value_params, row, query.kv_head, v.data());
    for (std::int64_t h = 0; h < query.num_heads; ++h) {
      const double e = std::exp(scores[h * positions + p] - r.max[h]);
      r.sum[h] += e;
      for (std::size_t i = 0; i < hd; ++i) r.acc[h * hd + i] += e * v[i];
    }
  }
  return r;
}

}  // namespace

void attend(const PagedKv& kv, const AttentionQuery& query, const AttentionPartial& out) {
  const std::size_t hd = static_cast<std::size_t>(kv.head_dim);
  const ExactPartial r = attend_exact(kv, query);
  for (std::int64_t h = 0; h < query.num_heads; ++h) {
    out.max[h] = static_cast<float>(r.max[h]);
    out.sum[h] = static_cast<float>(r.sum[h]);
    for (std::size_t i = 0; i < hd; ++i) out.acc[h * hd + i] = static_cast<float>(r.acc[h * hd + i]);
  }
}

void paged_attention(const float* q, std::int64_t rows, std::int64_t num_cached, std::int64_t num_heads,
                     std::span<const std::int32_t> block_table, const PagedKv& kv, float scale, float* out,
                     std::int64_t window) {
  const std::int64_t hd = kv.head_dim;
  const std::int64_t group = num_heads / kv.num_kv_heads;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t end = num_cached + r + 1;
    const std::int64_t begin = window > 0 ? std::max<std::int64_t>(0, end - window) : 0;
    for (std::int64_t kv_head = 0; kv_head < kv.num_kv_heads; ++kv_head) {
      const std::int64_t first_head = kv_head * group;
      const AttentionQuery query{.q = q + (r * num_heads + first_head) * hd,
                                 .num_heads = group,
                                 .kv_head = kv_head,
                                 .block_table = block_table.data(),
                                 .begin = begin,
                                 .end = end,
                                 .scale = scale};
      const ExactPartial p = attend_exact(kv, query);
      for (std::int64_t h = 0; h < group; ++h) {
        float* o = out + (r * num_heads + first_head + h) * hd;
        for (std::int64_t i = 0; i < hd; ++i) o[i] = static_cast<float>(p.acc[h * hd + i] / p.sum[h]);
      }
    }
  }
}

}  // namespace kiln::kernels::reference
