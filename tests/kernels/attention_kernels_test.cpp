// Oracles: (1) every ISA's attend() equals the scalar twin (double precision, two-pass softmax)
// within f32 rounding, for f32/f16/bf16/u8 K/V, on odd shapes: head_dim 16/20/48/64/80/128,
// 1-8 and 12 query heads per KV head, block sizes 1/7/16, contexts 1..300 starting anywhere (a split
// range), shuffled block tables; attend_rows (blocks of prefill rows) equals the twin row by row.
// (2) every ISA's encode() is bit-identical to the twin's.
// (3) The twin itself, over f32 K/V, equals kernels/reference/paged_attention (the f32 oracle the
// reference backend uses) after finish_attention, and merging the partials of a split context
// equals attending to the whole context.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/paged_attention.hpp"
#include "kernels/reference/paged_attention.hpp"
#include "matmul_test_util.hpp"

namespace kiln::kernels {
namespace {

using testing::all_isas;
using testing::random_matrix;

constexpr ElementType kElements[] = {ElementType::kF32, ElementType::kF16, ElementType::kBf16, ElementType::kU8};

struct Geometry {
  std::int64_t head_dim, group, kv_heads, block_size, group_size;
};

constexpr Geometry kGeometries[] = {
    {64, 4, 2, 16, 32},                       // Llama-3.2-1B's head shape
    {16, 1, 3, 7, 16},                        // MHA, blocks of 7 positions
    {48, 3, 1, 1, 16},                        // one position per block, three groups of 16
    {80, 12, 2, 16, 80},                      // more than 8 query heads per KV head; one u8 group per row
    {128, 8, 1, 5, 64},  {20, 2, 1, 3, 20},   // a head_dim that is no multiple of 8 (vector tails)
    {64, 7, 2, 16, 32},  {32, 6, 1, 16, 32},  // Qwen2.5's groups of 7 and 6 heads: passes whose
    {64, 5, 1, 4, 64},                        // positions do not split evenly into one sum tree
};

// A paged K/V cache filled from f32 values through the twin's encoder, with a shuffled table.
struct TestCache {
  Geometry g;
  ElementType element;
  std::int64_t num_blocks;
  std::vector<std::uint8_t> keys, values;  // [blocks, kv_heads, block_size, head_dim] encoded
  std::vector<float> key_params, value_params;
  std::vector<float> keys_f32, values_f32;  // the same positions decoded, same layout
  std::vector<std::int32_t> table;

  TestCache(const Geometry& geometry, ElementType e, std::int64_t positions, unsigned seed) : g(geometry), element(e) {
    num_blocks = (positions + g.block_size - 1) / g.block_size + 3;
    const std::int64_t rows = num_blocks * g.kv_heads * g.block_size;
    const std::int64_t groups = (g.head_dim + g.group_size - 1) / g.group_size;
    const auto bytes = static_cast<std::size_t>(g.head_dim) * element_bytes(e);
    keys.resize(rows * bytes);
    values.resize(rows * bytes);
    key_params.resize(rows * groups * 2);
    value_params.resize(rows * groups * 2);
    keys_f32.resize(rows * g.head_dim);
    values_f32.resize(rows * g.head_dim);
    const std::vector<float> k = random_matrix(rows, g.head_dim, seed, 1.0f);
    const std::vector<float> v = random_matrix(rows, g.head_dim, seed + 1, 1.0f);
    for (std::int64_t r = 0; r < rows; ++r) {
      reference::encode_kv(&k[r * g.head_dim], g.head_dim, e, g.group_size, &keys[r * bytes],
                           &key_params[r * groups * 2]);
      reference::encode_kv(&v[r * g.head_dim], g.head_dim, e, g.group_size, &values[r * bytes],
                           &value_params[r * groups * 2]);
      reference::decode_kv(&keys[r * bytes], g.head_dim, e, g.group_size, &key_params[r * groups * 2],
                           &keys_f32[r * g.head_dim]);
      reference::decode_kv(&values[r * bytes], g.head_dim, e, g.group_size, &value_params[r * groups * 2],
                           &values_f32[r * g.head_dim]);
    }
    table.resize(static_cast<std::size_t>(num_blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(seed));
  }

  PagedKv view() const {
    PagedKv kv;
    kv.element = element;
    kv.keys = keys.data();
    kv.values = values.data();
    if (element == ElementType::kU8) {
      kv.key_params = key_params.data();
      kv.value_params = value_params.data();
      kv.groups = (g.head_dim + g.group_size - 1) / g.group_size;
    }
    kv.block_size = g.block_size;
    kv.num_kv_heads = g.kv_heads;
    kv.head_dim = g.head_dim;
    kv.group_size = g.group_size;
    return kv;
  }
};

struct Partial {
  std::vector<float> max, sum, acc;
  Partial(std::int64_t heads, std::int64_t hd) : max(heads), sum(heads), acc(heads * hd) {}
  AttentionPartial view() { return {max.data(), sum.data(), acc.data()}; }
};

// Max |a - b| relative to max |b| (attention outputs are convex combinations of V rows).
float relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  float diff = 0, scale = 1e-6f;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff / scale;
}

class AttentionVsTwin : public ::testing::TestWithParam<Isa> {};

TEST_P(AttentionVsTwin, AttendMatchesScalarTwinOnOddShapes) {
  KILN_SKIP_UNLESS_SUPPORTED(GetParam());
  const AttentionKernels kernels = find_attention_kernels(GetParam());
  for (const Geometry& g : kGeometries) {
    for (ElementType e : kElements) {
      const std::int64_t positions = 300;
      const TestCache cache(g, e, positions, static_cast<unsigned>(g.head_dim + g.group));
      const std::vector<float> q = random_matrix(g.kv_heads * g.group, g.head_dim, 7, 0.3f);
      for (auto [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, 1}, {0, 17}, {5, 6}, {3, 300}, {129, 250}}) {
        for (std::int64_t kv_head = 0; kv_head < g.kv_heads; ++kv_head) {
          const AttentionQuery query{
              q.data() + kv_head * g.group * g.head_dim, g.group, kv_head, cache.table.data(), begin, end, 0.125f};
          Partial got(g.group, g.head_dim), want(g.group, g.head_dim);
          kernels.attend(cache.view(), query, got.view());
          reference::attend(cache.view(), query, want.view());
          SCOPED_TRACE(::testing::Message()
                       << "head_dim " << g.head_dim << " group " << g.group << " block " << g.block_size << " "
                       << kv_precision_name(e) << " [" << begin << ", " << end << ") kv_head " << kv_head);
          // max is exact up to the f32 dot product; sum and acc share the same rescaling.
          for (std::int64_t h = 0; h < g.group; ++h) {
            EXPECT_NEAR(got.max[h], want.max[h], 1e-5f * std::max(1.0f, std::fabs(want.max[h])));
            EXPECT_NEAR(got.sum[h] / want.sum[h], 1.0f, 2e-5f);
          }
          EXPECT_LT(relative_error(got.acc, want.acc), 2e-5f);
        }
      }
    }
  }
}

// attend_rows (where an ISA has it) equals the twin attending each row alone, then finished:
// rows of one block see causally growing contexts, from the first position or after a prefix.
// The vector levels' prefill kernel (the scalar level has none: the runtime attends row by row).
class AttendRowsVsTwin : public ::testing::TestWithParam<Isa> {};

TEST_P(AttendRowsVsTwin, AttendRowsMatchesTwinRowByRow) {
  KILN_SKIP_UNLESS_SUPPORTED(GetParam());
  const AttentionKernels kernels = find_attention_kernels(GetParam());
  ASSERT_NE(kernels.attend_rows, nullptr) << isa_name(GetParam()) << " has no attend_rows";
  for (const Geometry& g : kGeometries) {
    for (ElementType e : kElements) {
      const std::int64_t positions = 300;
      const TestCache cache(g, e, positions, static_cast<unsigned>(g.head_dim + g.group));
      const std::int64_t max_rows = kMaxAttentionRowQueries / g.group;
      const std::int64_t width = g.kv_heads * g.group * g.head_dim;  // one row of q / out
      const std::vector<float> q = random_matrix(max_rows, width, 9, 0.3f);
      for (auto [first_end, rows] :
           {std::pair<std::int64_t, std::int64_t>{1, max_rows}, {1, 1}, {40, 3}, {250, max_rows}}) {
        for (std::int64_t kv_head = 0; kv_head < g.kv_heads; ++kv_head) {
          const std::int64_t at = kv_head * g.group * g.head_dim;
          std::vector<float> got(max_rows * width, NAN);
          kernels.attend_rows(cache.view(),
                              AttentionRows{q.data() + at, width, rows, g.group, kv_head, cache.table.data(), first_end,
                                            0.125f, got.data() + at, width});
          SCOPED_TRACE(::testing::Message() << "head_dim " << g.head_dim << " group " << g.group << " block "
                                            << g.block_size << " " << kv_precision_name(e) << " first_end " << first_end
                                            << " rows " << rows << " kv_head " << kv_head);
          for (std::int64_t r = 0; r < rows; ++r) {
            Partial partial(g.group, g.head_dim);
            reference::attend(cache.view(),
                              AttentionQuery{q.data() + r * width + at, g.group, kv_head, cache.table.data(), 0,
                                             first_end + r, 0.125f},
                              partial.view());
            std::vector<float> want(g.group * g.head_dim);
            finish_attention(partial.view(), g.group, g.head_dim, want.data());
            const std::vector<float> row(got.begin() + r * width + at,
                                         got.begin() + r * width + at + g.group * g.head_dim);
            EXPECT_LT(relative_error(row, want), 2e-5f) << "row " << r;
          }
        }
      }
    }
  }
}

TEST_P(AttentionVsTwin, EncodeIsBitIdenticalToTwin) {
  KILN_SKIP_UNLESS_SUPPORTED(GetParam());
  const AttentionKernels kernels = find_attention_kernels(GetParam());
  std::vector<float> x = random_matrix(1, 200, 3, 2.0f);
  x[5] = 0.0f;
  x[6] = -0.0f;
  x[7] = 1e-41f;    // subnormal
  x[8] = 70000.0f;  // beyond f16: infinity
  for (std::size_t count : {1, 7, 16, 31, 48, 64, 200}) {
    for (std::size_t group : {16, 32, 64, 256}) {
      for (ElementType e : kElements) {
        const std::size_t groups = (count + group - 1) / group;
        std::vector<std::uint8_t> got(count * 4 + 8, 0xAB), want(count * 4 + 8, 0xAB);
        std::vector<float> got_params(groups * 2 + 1, -1.0f), want_params(groups * 2 + 1, -1.0f);
        kernels.encode(x.data(), count, e, group, got.data(), got_params.data());
        reference::encode_kv(x.data(), count, e, group, want.data(), want_params.data());
        EXPECT_EQ(got, want) << kv_precision_name(e) << " count " << count << " group " << group;
        if (e == ElementType::kU8) {
          EXPECT_EQ(got_params, want_params) << "count " << count << " group " << group;
        }
      }
    }
  }
  // A constant group: scale 0, every code 0, decodes to the constant exactly.
  const std::vector<float> constant(32, 0.75f);
  std::vector<std::uint8_t> codes(32);
  float params[2];
  kernels.encode(constant.data(), 32, ElementType::kU8, 32, codes.data(), params);
  EXPECT_EQ(params[0], 0.0f);
  EXPECT_EQ(params[1], 0.75f);
  EXPECT_EQ(*std::max_element(codes.begin(), codes.end()), 0);
}

INSTANTIATE_TEST_SUITE_P(VectorIsas, AttendRowsVsTwin, ::testing::Values(Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const auto& info) { return std::string(isa_name(info.param)); });
INSTANTIATE_TEST_SUITE_P(AllIsas, AttentionVsTwin, ::testing::ValuesIn(all_isas()),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

TEST(AttentionTwin, MatchesF32ReferenceAndSplitsMerge) {
  const Geometry g{32, 2, 2, 4, 32};
  const TestCache cache(g, ElementType::kF32, 40, 5);
  const std::int64_t heads = g.kv_heads * g.group, context = 37;
  const std::vector<float> q = random_matrix(1, heads * g.head_dim, 9, 0.5f);
  // The f32 oracle: one query row at position context - 1 (num_cached = context - 1).
  std::vector<float> oracle(heads * g.head_dim);
  const kernels::PagedKv kv =
      reference::f32_paged_kv(cache.keys_f32.data(), cache.values_f32.data(), g.block_size, g.kv_heads, g.head_dim);
  reference::paged_attention(q.data(), 1, context - 1, heads, cache.table, kv, 0.2f, oracle.data());
  for (std::int64_t kv_head = 0; kv_head < g.kv_heads; ++kv_head) {
    const float* qh = q.data() + kv_head * g.group * g.head_dim;
    Partial whole(g.group, g.head_dim), first(g.group, g.head_dim), second(g.group, g.head_dim);
    reference::attend(cache.view(), {qh, g.group, kv_head, cache.table.data(), 0, context, 0.2f}, whole.view());
    reference::attend(cache.view(), {qh, g.group, kv_head, cache.table.data(), 0, 11, 0.2f}, first.view());
    reference::attend(cache.view(), {qh, g.group, kv_head, cache.table.data(), 11, context, 0.2f}, second.view());
    merge_attention_partials(first.view(), second.view(), g.group, g.head_dim);
    std::vector<float> out_whole(g.group * g.head_dim), out_merged(g.group * g.head_dim);
    finish_attention(whole.view(), g.group, g.head_dim, out_whole.data());
    finish_attention(first.view(), g.group, g.head_dim, out_merged.data());
    const std::vector<float> want(oracle.begin() + kv_head * g.group * g.head_dim,
                                  oracle.begin() + (kv_head + 1) * g.group * g.head_dim);
    EXPECT_LT(relative_error(out_whole, want), 1e-6f);
    EXPECT_LT(relative_error(out_merged, want), 1e-6f);
  }
}

}  // namespace
}  // namespace kiln::kernels
