// GET /metrics: Prometheus text, one sample per served model (label model_name). The engine's
// gauges and counters (running and waiting requests, KV usage, prefix-cache queries and hits,
// preemptions, tokens) are read from each pipeline when scraped; the latency histograms (time to
// first token, inter-token latency, end-to-end, queue time) and speculative decoding's counts are recorded
// here as requests end. The queue, KV and running gauges are also published under the names vLLM
// gives them, which inference gateways (the Kubernetes Gateway API Inference Extension's
// model-server protocol) and autoscalers read.
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
  // The _bucket, _sum and _count samples with `labels` ("model_name=\"x\""), no header.
  void write_samples(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative; one more for +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

// What one served model's requests recorded as they ended.
class ServerMetrics {
 public:
  struct Recorded {
    Histogram ttft, inter_token, e2e, queue;
    std::uint64_t finished[4] = {};    // by finish reason: stop, length, abort, error
    std::int64_t draft_tokens = 0;     // speculative decoding: candidates proposed
    std::int64_t accepted_tokens = 0;  // and accepted
  };

  explicit ServerMetrics(std::string model_name);
  // A request ended with `finish_reason` ("stop", "length", "abort", "error"); `metrics` is its
  // handle's (empty for a request that failed or was abandoned before it ended).
  void record(const PerfMetrics& metrics, const std::string& finish_reason);
  Recorded recorded() const;                             // a copy, taken under the lock
  const std::string& labels() const { return labels_; }  // model_name="..."

 private:
  const std::string labels_;
  mutable std::mutex mutex_;
  Recorded recorded_;
};

// One served model's part of a scrape: what it recorded and its engine's state now.
struct ModelSample {
  const ServerMetrics* recorded = nullptr;
  PipelineMetrics engine;
};

// The Prometheus text of every model: each metric family once, a sample per model.
std::string prometheus_text(std::span<const ModelSample> models);

}  // namespace kiln::server
