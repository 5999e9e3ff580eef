// `kiln bench --concurrency N --requests M`: many users at once on one ContinuousBatchingPipeline,
// measured as serving benchmarks (vLLM's benchmark_serving, guidellm) measure it. N client
// threads keep N requests in flight until M have run; every prompt has exactly prompt_tokens
// tokens of distinct content (no prefix-cache hits between them; or, with shared_prefix_tokens,
// the same first tokens and distinct ones after: a shared system prompt), greedy with EOS ignored, so
// every request generates new_tokens. Per request: TTFT (add_request to the first token read),
// inter-token latencies (a read of k new tokens after d ms gives k samples of d / k), TPOT
// ((end-to-end - TTFT) / (tokens - 1)) and end-to-end latency; overall: output tokens per second
// of wall time, from the first request added to the last finished.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace kiln::eval {

struct ServingBenchmarkOptions {
  std::filesystem::path model;
  std::string device = "CPU";
  std::map<std::string, std::string> properties;
  std::int64_t prompt_tokens = 128;
  std::int64_t new_tokens = 128;
  std::int64_t concurrency = 1;
  std::int64_t requests = 16;
  std::int64_t max_num_batched_tokens = 2048;
  bool prefix_caching = true;
  std::int64_t shared_prefix_tokens = 0;  // prompts agree on this many first tokens
};

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

struct ServingBenchmarkResult {
  ServingBenchmarkOptions options;
  double load_ms = 0;
  double wall_s = 0;
  std::int64_t generated_tokens = 0;
  double output_tokens_per_s = 0;
  double requests_per_s = 0;
  Percentiles ttft_ms, tpot_ms, itl_ms, e2e_ms;
  std::int64_t preemptions = 0;
  double max_cache_usage = 0;          // % of KV blocks
  std::int64_t prefix_cache_hits = 0;  // prompt tokens served from the prefix cache (warm-up included)
};

// Linear interpolation between closest ranks (numpy's default); 0 for no samples.
double percentile(std::vector<double> samples, double p);

// Throws kiln::Error when the model does not load or a request does not produce new_tokens.
ServingBenchmarkResult run_serving_benchmark(const ServingBenchmarkOptions& options);

Json to_json(const ServingBenchmarkResult& result);

}  // namespace kiln::eval
