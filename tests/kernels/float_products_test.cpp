// Oracles: C += A·B recomputed in f64 by plain loops (the AVX2 and AVX-512 kernels and their
// scalar twin must agree with it to f32 rounding on odd shapes: 1 row, tiles cut by the 6- and
// 8-row and 16- and 32-column blocking, k across the 512-step block), and the kernels must equal
// a std::fma chain in k order bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "kernels/float_products.hpp"
#include "kernels/reference/float_products.hpp"

namespace kiln::kernels {
namespace {

struct Case {
  std::size_t m, n, k;
  bool a_transposed;  // A(i, k) read as a[k * m + i] (Xᵀ from X's rows) instead of a[i * k + k]
};

std::vector<float> random_floats(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = n(rng);
  return v;
}

FloatProduct product_for(const Case& c, const std::vector<float>& a, const std::vector<float>& b,
                         std::vector<float>& out) {
  return {.a = a.data(),
          .a_row_stride = c.a_transposed ? 1 : c.k,
          .a_k_stride = c.a_transposed ? c.m : 1,
          .b = b.data(),
          .ldb = c.n,
          .c = out.data(),
          .ldc = c.n,
          .m = c.m,
          .n = c.n,
          .k = c.k};
}

// C0 + A·B in f64, and the bound on its f32 rounding: k · 2⁻²³ · Σ|a||b| per element, plus C0's.
void check_against_f64(const Case& c, const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<float>& c0, const std::vector<float>& got) {
  for (std::size_t i = 0; i < c.m; ++i) {
    for (std::size_t j = 0; j < c.n; ++j) {
      double want = c0[i * c.n + j], magnitude = std::fabs(want);
      for (std::size_t k = 0; k < c.k; ++k) {
        const double av = c.a_transposed ? a[k * c.m + i] : a[i * c.k + k];
        want += av * b[k * c.n + j];
        magnitude += std::fabs(av * b[k * c.n + j]);
      }
      ASSERT_NEAR(got[i * c.n + j], want, double(c.k + 1) * 1.2e-7 * magnitude + 1e-30)
          << "m " << c.m << " n " << c.n << " k " << c.k << " at (" << i << ", " << j << ")";
    }
  }
}

const Case kCases[] = {{1, 1, 1, false},    {1, 33, 7, true},    {7, 15, 5, false},    {8, 16, 64, true},
                       {9, 17, 600, false}, {33, 31, 129, true}, {17, 100, 513, true}, {64, 32, 40, false}};

TEST(FloatProducts, ScalarTwinMatchesF64) {
  for (const Case& c : kCases) {
    const auto a = random_floats(c.m * c.k, 1), b = random_floats(c.k * c.n, 2), c0 = random_floats(c.m * c.n, 3);
    std::vector<float> got = c0;
    reference::accumulate_product(product_for(c, a, b, got));
    check_against_f64(c, a, b, c0, got);
  }
}

TEST(FloatProducts, Avx512MatchesF64AndTheScalarTwin) {
  if (!isa_supported(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const Case& c : kCases) {
    const auto a = random_floats(c.m * c.k, 4), b = random_floats(c.k * c.n, 5), c0 = random_floats(c.m * c.n, 6);
    std::vector<float> got = c0, scalar = c0;
    accumulate_product(product_for(c, a, b, got), Isa::kAvx512);
    reference::accumulate_product(product_for(c, a, b, scalar));
    check_against_f64(c, a, b, c0, got);
    // Both sum each element in k order; they differ only where FMA skips a rounding.
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], scalar[i], 1e-4 * (1 + std::fabs(scalar[i])));
  }
}

// The kernels' contract, exactly: each C element is c = fma(a, b, c) over k in order.
std::vector<float> fma_chain(const Case& c, const std::vector<float>& a, const std::vector<float>& b,
                             std::vector<float> out) {
  for (std::size_t i = 0; i < c.m; ++i) {
    for (std::size_t j = 0; j < c.n; ++j) {
      for (std::size_t k = 0; k < c.k; ++k) {
        const float av = c.a_transposed ? a[k * c.m + i] : a[i * c.k + k];
        out[i * c.n + j] = std::fma(av, b[k * c.n + j], out[i * c.n + j]);
      }
    }
  }
  return out;
}

class FloatProductKernel : public ::testing::TestWithParam<Isa> {};

TEST_P(FloatProductKernel, MatchesF64AndIsTheFmaChainBitForBit) {
  if (!isa_supported(GetParam())) GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam());
  // Beyond kCases: the 6-row tile's remainders, a ragged 16-column strip, the shapes AWQ and
  // scale estimation call (64 rows × 128 samples × 704 inputs; 32 rows × 64 × 64).
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  cases.insert(cases.end(), {{6, 16, 3, false},
                             {11, 8, 9, true},
                             {13, 24, 520, false},
                             {64, 128, 704, false},
                             {32, 64, 64, false},
                             {5, 1, 1030, true}});
  for (const Case& c : cases) {
    const auto a = random_floats(c.m * c.k, 10), b = random_floats(c.k * c.n, 11), c0 = random_floats(c.m * c.n, 12);
    std::vector<float> got = c0;
    accumulate_product(product_for(c, a, b, got), GetParam());
    check_against_f64(c, a, b, c0, got);
    ASSERT_EQ(got, fma_chain(c, a, b, c0)) << "m " << c.m << " n " << c.n << " k " << c.k;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, FloatProductKernel, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace kiln::kernels
