// Oracles: C += A·B recomputed in f64 by plain loops (the AVX2 and AVX-512 kernels and their
// scalar twin must agree with it to f32 rounding on odd shapes: 1 row, tiles cut by the 6- and
// 8-row and 16- and 32-column blocking, k across the 512-step block), and the kernels must equal
// a std::fma chain in k order bit for bit; a thread pool must not change a single bit; the input
// Hessian built from these products must equal Σ x xᵀ summed directly, and the per-channel sums
// split over a pool must equal a direct f64 loop and the serial sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "export/activation_statistics.hpp"
#include "export/float_products.hpp"
#include "runtime/thread_pool.hpp"

namespace kiln::exporter {
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
    accumulate_product_scalar(product_for(c, a, b, got));
    check_against_f64(c, a, b, c0, got);
  }
}

TEST(FloatProducts, Avx512MatchesF64AndTheScalarTwin) {
  if (!isa_supported(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const Case& c : kCases) {
    const auto a = random_floats(c.m * c.k, 4), b = random_floats(c.k * c.n, 5), c0 = random_floats(c.m * c.n, 6);
    std::vector<float> got = c0, scalar = c0;
    accumulate_product(product_for(c, a, b, got), Isa::kAvx512);
    accumulate_product_scalar(product_for(c, a, b, scalar));
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

class FloatProductKernel : public testing::TestWithParam<Isa> {};

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

INSTANTIATE_TEST_SUITE_P(Isas, FloatProductKernel, testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

TEST(FloatProducts, ThreadPoolChangesNoBit) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3});
  const Case c{101, 45, 77, true};
  const auto a = random_floats(c.m * c.k, 7), b = random_floats(c.k * c.n, 8);
  std::vector<float> serial(c.m * c.n, 0.0f), parallel(c.m * c.n, 0.0f);
  accumulate_product_parallel(product_for(c, a, b, serial), nullptr);
  accumulate_product_parallel(product_for(c, a, b, parallel), &pool);
  EXPECT_EQ(serial, parallel);
}

TEST(FloatProducts, FullHessianIsSumOfOuterProductsWithOrWithoutAPool) {
  const std::size_t in = 75, rows = 130;
  const auto x = random_floats(rows * in, 9);  // [rows, in]
  StatisticsConfig config;
  config.hessian = HessianMode::kFull;
  InputStatistics serial(in, config), pooled(in, config);
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  for (InputStatistics* s : {&serial, &pooled}) {
    s->begin_sample();
    s->add_rows(x.data(), 70, s == &pooled ? &pool : nullptr);  // two calls: sums carry over
    s->add_rows(x.data() + 70 * in, rows - 70, s == &pooled ? &pool : nullptr);
    s->end_sample();
  }
  for (std::size_t i = 0; i < in; ++i) {
    for (std::size_t j = 0; j < in; ++j) {
      double want = 0, magnitude = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        want += double(x[r * in + i]) * x[r * in + j];
        magnitude += std::fabs(double(x[r * in + i]) * x[r * in + j]);
      }
      ASSERT_NEAR(serial.hessian(i, j), want, 1e-5 * magnitude) << i << ", " << j;
      ASSERT_EQ(serial.hessian(i, j), pooled.hessian(i, j));
    }
  }
}

// The per-channel sums split channel ranges over the pool (128 channels a task): 301 channels
// make a ragged third task (six-channel passes, a pair, one odd channel). Oracle: each statistic
// recomputed by a direct f64 loop (the sums of |x| and the max |x| in row order, so exactly), and
// the pooled statistics equal the serial ones bit for bit.
TEST(InputStatisticsSums, MatchDirectSumsWithOrWithoutAPool) {
  const std::size_t in = 301, rows = 90;
  const auto x = random_floats(rows * in, 13);  // [rows, in]: two samples of 40 and 50 rows
  InputStatistics serial(in, StatisticsConfig{}), pooled(in, StatisticsConfig{});
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
  for (InputStatistics* s : {&serial, &pooled}) {
    ThreadPool* p = s == &pooled ? &pool : nullptr;
    s->begin_sample();
    s->add_rows(x.data(), 40, p);
    s->end_sample();
    s->begin_sample();
    s->add_rows(x.data() + 40 * in, 30, p);  // two calls in one sample: sums carry over
    s->add_rows(x.data() + 70 * in, 20, p);
    s->end_sample();
  }
  double max_var_sum = 0, magnitude_sum = 0;
  for (auto [first, n] : {std::pair<std::size_t, std::size_t>{0, 40}, {40, 50}}) {
    double max_var = 0, magnitude = 0;
    for (std::size_t c = 0; c < in; ++c) {
      double max_abs = 0;
      for (std::size_t r = first; r < first + n; ++r) max_abs = std::max(max_abs, std::fabs(double(x[r * in + c])));
      magnitude += max_abs;
      double mean = 0, sq = 0;
      for (std::size_t r = first; r < first + n; ++r) mean += x[r * in + c] / double(n);
      for (std::size_t r = first; r < first + n; ++r) sq += (x[r * in + c] - mean) * (x[r * in + c] - mean);
      max_var = std::max(max_var, sq / double(n));
      const float got = serial.sample_means()[(first == 0 ? 0 : 1) * in + c];
      ASSERT_NEAR(got, mean, 1e-5 * (1 + std::fabs(mean))) << "channel " << c;
    }
    max_var_sum += max_var;
    magnitude_sum += magnitude / double(in);
  }
  EXPECT_NEAR(serial.max_variance(), max_var_sum / 2, 1e-9 * max_var_sum);
  EXPECT_EQ(serial.mean_magnitude(), magnitude_sum / 2);
  for (std::size_t c = 0; c < in; ++c) {
    double sum_abs = 0;
    for (std::size_t r = 0; r < rows; ++r) sum_abs += std::fabs(double(x[r * in + c]));
    ASSERT_EQ(serial.mean_abs(c), sum_abs / double(rows)) << "channel " << c;
    ASSERT_EQ(serial.mean_abs(c), pooled.mean_abs(c)) << "channel " << c;
  }
  EXPECT_EQ(serial.sample_means(), pooled.sample_means());
  EXPECT_EQ(serial.max_variance(), pooled.max_variance());
  EXPECT_EQ(serial.mean_variance(), pooled.mean_variance());
  EXPECT_EQ(serial.mean_magnitude(), pooled.mean_magnitude());
  EXPECT_EQ(serial.hessian_trace(), pooled.hessian_trace());
}

}  // namespace
}  // namespace kiln::exporter
