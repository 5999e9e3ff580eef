// Oracles: a thread pool must not change a single bit of a product; the input Hessian built from
// these products must equal Σ x xᵀ summed directly, and the per-channel sums split over a pool
// must equal a direct f64 loop and the serial sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "export/activation_statistics.hpp"
#include "export/parallel_products.hpp"
#include "runtime/thread_pool.hpp"

namespace kiln::exporter {
namespace {

std::vector<float> random_floats(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = n(rng);
  return v;
}

TEST(ParallelProducts, ThreadPoolChangesNoBit) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3});
  const std::size_t m = 101, n = 45, k = 77;
  const auto a = random_floats(m * k, 7), b = random_floats(k * n, 8);  // A read transposed: a [k, m]
  std::vector<float> serial(m * n, 0.0f), parallel(m * n, 0.0f);
  for (auto [out, p] : {std::pair{&serial, static_cast<ThreadPool*>(nullptr)}, {&parallel, &pool}}) {
    accumulate_product_parallel({.a = a.data(),
                                 .a_row_stride = 1,
                                 .a_k_stride = m,
                                 .b = b.data(),
                                 .ldb = n,
                                 .c = out->data(),
                                 .ldc = n,
                                 .m = m,
                                 .n = n,
                                 .k = k},
                                p);
  }
  EXPECT_EQ(serial, parallel);
}

TEST(ParallelProducts, FullHessianIsSumOfOuterProductsWithOrWithoutAPool) {
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
