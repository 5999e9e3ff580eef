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

// Every statistic pools the samples of the calls it sums, acceptance rate and the draft's
// prefill included: two samples x and y give mean (x + y) / 2 and std |x - y| / 2.
TEST(PerfMetrics, EveryStatisticIsMeanAndStdOverCalls) {
  PerfMetrics a, b;
  const auto fill = [](RawPerfMetrics& r, double x) {
    for (auto* v : {&r.generate_durations_ms, &r.tokenization_durations_ms, &r.detokenization_durations_ms, &r.ttfts_ms,
                    &r.throughputs, &r.num_input_tokens, &r.num_prefilled_tokens, &r.num_generated_tokens,
                    &r.acceptance_rates, &r.num_draft_prefilled_tokens, &r.token_latencies_ms}) {
      v->push_back(x);
    }
  };
  fill(a.raw, 0.25);
  fill(b.raw, 0.75);
  const PerfMetrics sum = a + b;
  for (const MeanStd& m : {sum.get_generate_duration(), sum.get_tokenization_duration(),
                           sum.get_detokenization_duration(), sum.get_ttft(), sum.get_throughput(),
                           sum.get_num_input_tokens(), sum.get_num_prefilled_tokens(), sum.get_num_generated_tokens(),
                           sum.get_acceptance_rate(), sum.get_num_draft_prefilled_tokens(), sum.get_tpot()}) {
    EXPECT_DOUBLE_EQ(m.mean, 0.5);
    EXPECT_DOUBLE_EQ(m.std, 0.25);
  }
}

}  // namespace
}  // namespace kiln
