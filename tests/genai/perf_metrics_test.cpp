// Oracle: mean and population standard deviation computed by hand; summing metrics pools the
// samples of both calls (so mean ± std is over calls, not an average of averages).
#include "kiln/perf_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

TEST(PerfMetrics, MeanAndStdOverPooledCalls) {
  EXPECT_DOUBLE_EQ(mean_std({}).mean, 0.0);
  const MeanStd one = mean_std({5.0});
  EXPECT_DOUBLE_EQ(one.mean, 5.0);
  EXPECT_DOUBLE_EQ(one.std, 0.0);
  PerfMetrics a, b;
  a.load_time_ms = 100;
  a.raw.ttfts_ms = {10};
  a.raw.token_latencies_ms = {2, 4};
  a.raw.generate_durations_ms = {50};
  b.raw.ttfts_ms = {30};
  b.raw.token_latencies_ms = {6};
  b.raw.generate_durations_ms = {70};
  b.raw.acceptance_rates = {0.5};
  b.raw.num_proposed_tokens = 8;
  b.raw.num_accepted_tokens = 4;
  const PerfMetrics sum = a + b;
  EXPECT_DOUBLE_EQ(sum.load_time_ms, 100);
  EXPECT_DOUBLE_EQ(sum.get_ttft().mean, 20);
  EXPECT_DOUBLE_EQ(sum.get_ttft().std, 10);
  EXPECT_DOUBLE_EQ(sum.get_tpot().mean, 4);
  EXPECT_NEAR(sum.get_tpot().std, std::sqrt(8.0 / 3.0), 1e-12);
  EXPECT_EQ(sum.num_calls(), 2);
  EXPECT_DOUBLE_EQ(sum.get_acceptance_rate().mean, 0.5);
  EXPECT_EQ(sum.raw.num_accepted_tokens, 4);
}

}  // namespace
}  // namespace kiln
