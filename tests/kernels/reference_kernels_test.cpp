// Oracles for the scalar reference kernels themselves: closed-form values (silu, RMS of a
// normalised row), and for paged attention a dense textbook attention over contiguous K/V,
// which shares no code with the paged kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/reference/elementwise.hpp"
#include "kernels/reference/paged_attention.hpp"

namespace kiln::kernels::reference {
namespace {

TEST(ReferenceElementwise, RmsNormHasUnitRmsWithUnitGain) {
  std::vector<float> x{1, -2, 3, 0.5f, 7, -1, 0, 2};
  std::vector<float> gain(4, 1.0f), out(8);
  rms_norm(x.data(), gain.data(), 0.0, 2, 4, out.data());
  for (int r = 0; r < 2; ++r) {
    double s = 0;
    for (int i = 0; i < 4; ++i) s += out[r * 4 + i] * out[r * 4 + i];
    EXPECT_NEAR(std::sqrt(s / 4), 1.0, 1e-6);
  }
  rms_norm(x.data(), gain.data(), 0.0, 2, 4, x.data());  // in place
  EXPECT_EQ(x, out);
}

TEST(ReferenceElementwise, SiluMulValues) {
  const std::vector<float> gate{0.0f, 1.0f, -1.0f, 20.0f};
  const std::vector<float> up{5.0f, 2.0f, 2.0f, 1.0f};
  std::vector<float> out(4);
  silu_mul(gate.data(), up.data(), 4, out.data());
  EXPECT_FLOAT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 2.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(out[2], -2.0 / (1.0 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(out[3], 20.0, 1e-5);
}

// Dense causal attention over contiguous k, v [positions, kv_heads, hd].
std::vector<float> dense_attention(const std::vector<float>& q, std::int64_t rows, std::int64_t num_cached,
                                   std::int64_t heads, std::int64_t kv_heads, std::int64_t hd,
                                   const std::vector<float>& k, const std::vector<float>& v, float scale) {
  std::vector<float> out(q.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t g = h / (heads / kv_heads);
      std::vector<double> w;
      for (std::int64_t p = 0; p <= num_cached + r; ++p) {
        double s = 0;
        for (std::int64_t i = 0; i < hd; ++i) s += q[(r * heads + h) * hd + i] * k[(p * kv_heads + g) * hd + i];
        w.push_back(std::exp(s * scale));
      }
      double total = 0;
      for (double x : w) total += x;
      for (std::int64_t i = 0; i < hd; ++i) {
        double acc = 0;
        for (std::size_t p = 0; p < w.size(); ++p) acc += w[p] * v[(p * kv_heads + g) * hd + i];
        out[(r * heads + h) * hd + i] = static_cast<float>(acc / total);
      }
    }
  }
  return out;
}

TEST(ReferencePagedAttention, EqualsDenseAttentionWithScrambledBlocks) {
  const std::int64_t heads = 6, kv_heads = 2, hd = 8, block = 3, num_blocks = 10;
  const std::int64_t num_cached = 11, rows = 5, total = num_cached + rows;
  const std::vector<std::int32_t> table{7, 2, 9, 0, 5, 4};  // 6 blocks × 3 ≥ 16 positions
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  std::vector<float> k(total * kv_heads * hd), v(k.size()), q(rows * heads * hd);
  for (auto* buf : {&k, &v, &q})
    for (float& x : *buf) x = dist(rng);
  std::vector<float> paged_k(num_blocks * kv_heads * block * hd), paged_v(paged_k.size());
  for (std::int64_t p = 0; p < total; ++p) {
    for (std::int64_t g = 0; g < kv_heads; ++g) {
      for (std::int64_t i = 0; i < hd; ++i) {
        const std::int64_t dst = ((table[p / block] * kv_heads + g) * block + p % block) * hd + i;
        paged_k[dst] = k[(p * kv_heads + g) * hd + i];
        paged_v[dst] = v[(p * kv_heads + g) * hd + i];
      }
    }
  }
  std::vector<float> out(q.size());
  paged_attention(q.data(), rows, num_cached, heads, table,
                  f32_paged_kv(paged_k.data(), paged_v.data(), block, kv_heads, hd), 0.35f, out.data());
  const auto expected = dense_attention(q, rows, num_cached, heads, kv_heads, hd, k, v, 0.35f);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-5) << i;
}

TEST(ReferencePagedAttention, SinglePositionReturnsItsValue) {
  const std::vector<std::int32_t> table{1};
  std::vector<float> k(2 * 1 * 4 * 2, 0.0f), v(k.size(), 0.0f), q{1.0f, -3.0f};
  v[(1 * 4 + 0) * 2 + 0] = 0.25f;  // block 1, offset 0
  v[(1 * 4 + 0) * 2 + 1] = -8.0f;
  std::vector<float> out(2);
  paged_attention(q.data(), 1, 0, 1, table, f32_paged_kv(k.data(), v.data(), 4, 1, 2), 1.0f, out.data());
  EXPECT_FLOAT_EQ(out[0], 0.25f);
  EXPECT_FLOAT_EQ(out[1], -8.0f);
}

}  // namespace
}  // namespace kiln::kernels::reference
