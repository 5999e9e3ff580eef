// GET /metrics: Prometheus text. The engine's gauges and counters (running and waiting
// requests, KV usage, prefix-cache queries and hits, preemptions, tokens) are read from the
// pipeline when scraped; the per-request latency histograms (time to first token, inter-token
// latency, end-to-end) and speculative decoding's counts are recorded here as requests end. The queue, KV and running
// gauges are also published under the names vLLM gives them, which is what inference gateways (the Kubernetes Gateway
// API Inference Extension's model-server protocol) and autoscalers read.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kiln/continuous_batching_pipeline.hpp"
#include "kiln/perf_metrics.hpp"

namespace kiln::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);  // upper bounds of the buckets, ascending
  void observe(double value);
  // The _bucket, _sum and _count series, with `labels` ("model_name=\"x\"").
  void write(std::string& out, const std::string& name, const std::string& help, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative; one more for +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

class ServerMetrics {
 public:
  explicit ServerMetrics(std::string model_name);
  // A request ended with `finish_reason` ("stop", "length", "abort", "error"); `metrics` is its
  // handle's (empty for a request that failed or was abandoned before it ended).
  void record(const PerfMetrics& metrics, const std::string& finish_reason);
  std::string prometheus(const PipelineMetrics& engine) const;

 private:
  const std::string labels_;
  mutable std::mutex mutex_;
  Histogram ttft_;
  Histogram inter_token_;
  Histogram e2e_;
  std::uint64_t finished_[4] = {};    // by finish reason, in kFinishReasons order
  std::int64_t draft_tokens_ = 0;     // speculative decoding: candidates proposed
  std::int64_t accepted_tokens_ = 0;  // and accepted
};

}  // namespace kiln::server
