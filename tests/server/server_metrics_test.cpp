// Oracle: the Prometheus text exposition format (cumulative buckets ending in +Inf, _sum and
// _count) and the gauge names vLLM publishes, which gateways and autoscalers read.
#include "server/server_metrics.hpp"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(ServerMetrics, HistogramBucketsAreCumulative) {
  Histogram h({0.1, 1.0});
  for (double v : {0.05, 0.1, 0.5, 3.0}) h.observe(v);
  std::string out;
  h.write_samples(out, "x", "a=\"b\"");
  EXPECT_TRUE(has_line(out, "x_bucket{a=\"b\",le=\"0.1\"} 2")) << out;  // le is inclusive
  EXPECT_TRUE(has_line(out, "x_bucket{a=\"b\",le=\"1\"} 3")) << out;
  EXPECT_TRUE(has_line(out, "x_bucket{a=\"b\",le=\"+Inf\"} 4")) << out;
  EXPECT_TRUE(has_line(out, "x_sum{a=\"b\"} 3.65")) << out;
  EXPECT_TRUE(has_line(out, "x_count{a=\"b\"} 4")) << out;
}

TEST(ServerMetrics, EngineGaugesUnderKilnAndVllmNames) {
  ServerMetrics metrics("tiny");
  PerfMetrics m;
  m.raw.ttfts_ms = {250.0};
  m.raw.token_latencies_ms = {20.0, 30.0};
  m.raw.generate_durations_ms = {1000.0};
  m.raw.queue_times_ms = {400.0};
  m.raw.num_proposed_tokens = 10;
  m.raw.num_accepted_tokens = 7;
  metrics.record(m, "length");
  metrics.record({}, "abort");
  PipelineMetrics engine;
  engine.scheduled_requests = 3;
  engine.waiting_requests = 2;
  engine.cache_usage = 25.0;  // percent in PipelineMetrics, a fraction in Prometheus
  engine.prefix_cache_hits = 64;
  const ModelSample sample{&metrics, engine};
  const std::string text = prometheus_text({&sample, 1});
  for (const char* prefix : {"kiln", "vllm"}) {
    const std::string p = prefix;
    EXPECT_TRUE(has_line(text, p + ":num_requests_running{model_name=\"tiny\"} 3")) << text;
    EXPECT_TRUE(has_line(text, p + ":num_requests_waiting{model_name=\"tiny\"} 2")) << text;
    EXPECT_TRUE(has_line(text, p + ":kv_cache_usage_perc{model_name=\"tiny\"} 0.25")) << text;
  }
  EXPECT_TRUE(has_line(text, "vllm:gpu_cache_usage_perc{model_name=\"tiny\"} 0.25")) << text;
  EXPECT_TRUE(has_line(text, "kiln:prefix_cache_hits_total{model_name=\"tiny\"} 64")) << text;
  EXPECT_TRUE(has_line(text, "kiln:request_success_total{model_name=\"tiny\",finished_reason=\"length\"} 1"));
  EXPECT_TRUE(has_line(text, "kiln:request_success_total{model_name=\"tiny\",finished_reason=\"abort\"} 1"));
  EXPECT_TRUE(has_line(text, "kiln:time_to_first_token_seconds_count{model_name=\"tiny\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "kiln:spec_decode_num_draft_tokens_total{model_name=\"tiny\"} 10")) << text;
  EXPECT_TRUE(has_line(text, "kiln:spec_decode_num_accepted_tokens_total{model_name=\"tiny\"} 7")) << text;
  EXPECT_TRUE(has_line(text, "kiln:inter_token_latency_seconds_count{model_name=\"tiny\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "kiln:e2e_request_latency_seconds_sum{model_name=\"tiny\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "kiln:request_queue_time_seconds_bucket{model_name=\"tiny\",le=\"0.3\"} 0")) << text;
  EXPECT_TRUE(has_line(text, "kiln:request_queue_time_seconds_bucket{model_name=\"tiny\",le=\"0.5\"} 1")) << text;
}

TEST(ServerMetrics, SeveralModelsShareEachFamilyHeader) {
  ServerMetrics a("a"), b("b");
  PipelineMetrics busy;
  busy.scheduled_requests = 5;
  const std::vector<ModelSample> samples = {{&a, busy}, {&b, {}}};
  const std::string text = prometheus_text(samples);
  EXPECT_TRUE(has_line(text, "kiln:num_requests_running{model_name=\"a\"} 5")) << text;
  EXPECT_TRUE(has_line(text, "kiln:num_requests_running{model_name=\"b\"} 0")) << text;
  // The exposition format allows one HELP and TYPE per family.
  std::size_t headers = 0;
  for (std::size_t at = 0; (at = text.find("# TYPE kiln:time_to_first_token_seconds ", at)) != std::string::npos;
       ++at) {
    ++headers;
  }
  EXPECT_EQ(headers, 1u);
  EXPECT_TRUE(has_line(text, "kiln:time_to_first_token_seconds_count{model_name=\"b\"} 0")) << text;
}

}  // namespace
}  // namespace kiln::server
