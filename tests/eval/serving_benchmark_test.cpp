// `kiln bench --concurrency` (eval/serving_benchmark.cpp). Oracles: numpy's percentile
// (linear interpolation) on known samples; identities between the aggregates (every request
// generates new_tokens, output tokens/s = tokens / wall time, p50 <= p90 <= p99 <= the largest
// end-to-end latency); the same figures through the binary's text and --json.
#include "eval/serving_benchmark.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "util/file_io.hpp"

namespace kiln::eval {
namespace {

TEST(ServingBenchmark, PercentilesInterpolateAsNumpy) {
  const std::vector<double> ten{10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_DOUBLE_EQ(percentile(ten, 50), 5.5);   // numpy.percentile(range(1, 11), 50)
  EXPECT_DOUBLE_EQ(percentile(ten, 90), 9.1);   // ... 90
  EXPECT_DOUBLE_EQ(percentile(ten, 99), 9.91);  // ... 99
  EXPECT_DOUBLE_EQ(percentile({4}, 99), 4.0);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0.0);
}

ServingBenchmarkOptions serving_options(std::int64_t prompt_tokens, std::int64_t new_tokens, std::int64_t concurrency,
                                        std::int64_t requests) {
  ServingBenchmarkOptions o;
  o.model = testing::embedded_model_dir();
  o.prompt_tokens = prompt_tokens;
  o.new_tokens = new_tokens;
  o.concurrency = concurrency;
  o.requests = requests;
  return o;
}

TEST(ServingBenchmark, EveryRequestCountsAndTheFiguresAgree) {
  const ServingBenchmarkResult r = run_serving_benchmark(serving_options(20, 8, 3, 7));
  EXPECT_EQ(r.generated_tokens, 7 * 8);
  EXPECT_NEAR(r.output_tokens_per_s, double(r.generated_tokens) / r.wall_s, 1e-6);
  EXPECT_GT(r.ttft_ms.p50, 0.0);
  for (const Percentiles& p : {r.ttft_ms, r.tpot_ms, r.itl_ms, r.e2e_ms}) {
    EXPECT_LE(p.p50, p.p90);
    EXPECT_LE(p.p90, p.p99);
  }
  EXPECT_LE(r.ttft_ms.p99, r.e2e_ms.p99);
  EXPECT_LE(r.e2e_ms.p99, r.wall_s * 1000.0);
  EXPECT_EQ(r.preemptions, 0);  // the KV cache holds every request in flight
}

// A shared prefix is served from the cache to every request after the warm-up (kiln-tiny's
// blocks are 16 tokens: 32 shared tokens are 2 whole blocks); with the cache off, none is.
TEST(ServingBenchmark, SharedPrefixIsServedFromTheCache) {
  ServingBenchmarkOptions o = serving_options(40, 2, 2, 4);
  o.shared_prefix_tokens = 32;
  EXPECT_GE(run_serving_benchmark(o).prefix_cache_hits, 4 * 32);
  o.prefix_caching = false;
  EXPECT_EQ(run_serving_benchmark(o).prefix_cache_hits, 0);
  o.shared_prefix_tokens = 40;
  EXPECT_THROW(run_serving_benchmark(o), Error);
}

TEST(ServingBenchmarkCli, TextAndJsonAgree) {
  testing::TempDir tmp;
  const auto json_path = tmp.path() / "serve.json";
  const auto r = testing::run_kiln({"bench", "--concurrency", "2", "--requests", "5", "--prompt-tokens", "12",
                                    "--new-tokens", "6", "--json", json_path.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("5 requests, 2 at a time"), std::string::npos) << r.out;
  const Json json = read_json_file(json_path);
  EXPECT_EQ(json["generated_tokens"], 30);
  EXPECT_EQ(json["concurrency"], 2);
  const std::string ttft = fmt::format("p99 {:8.2f} ms", json["ttft_ms"]["p99"].get<double>());
  EXPECT_NE(r.out.find(ttft), std::string::npos) << ttft << " not in\n" << r.out;
  const std::string output = fmt::format("output      {:.2f} tokens/s", json["output_tokens_per_s"].get<double>());
  EXPECT_NE(r.out.find(output), std::string::npos) << output << " not in\n" << r.out;
}

TEST(ServingBenchmarkCli, RequestsNeedConcurrency) {
  const auto r = testing::run_kiln({"bench", "--requests", "4"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("need --concurrency"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kiln::eval
