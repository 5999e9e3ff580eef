// Performance metrics of generate() calls, named as OpenVINO GenAI names them. Each call adds
// raw samples; a statistic is the mean ± standard deviation over the samples of every call
// summed into this object (a + b pools both calls' samples), so a chat's /stats and a
// benchmark's repeated runs report spread, not one lucky number.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/api.hpp"

namespace kiln {

struct MeanStd {
  double mean = 0;
  double std = 0;  // population standard deviation; 0 for a single sample
};

struct RawPerfMetrics {
  // One sample per generate() call.
  std::vector<double> generate_durations_ms;
  std::vector<double> tokenization_durations_ms;
  std::vector<double> detokenization_durations_ms;
  std::vector<double> ttfts_ms;  // from the call's start to its first generated token
  // From a request's arrival at the engine to the first step that scheduled it (time spent
  // waiting for its turn or for KV blocks); one per request that was scheduled.
  std::vector<double> queue_times_ms;
  std::vector<double> throughputs;           // generated tokens per second of the call
  std::vector<double> num_input_tokens;      // prompt tokens
  std::vector<double> num_prefilled_tokens;  // prompt tokens actually computed (the rest reused from the KV cache)
  std::vector<double> num_generated_tokens;
  std::vector<double> acceptance_rates;  // speculative calls only: accepted / proposed candidates
  // Calls with a draft model only: prompt tokens the draft computed (the rest came from its KV
  // cache of a chat's previous turns, or it never caught up on them: it does so lazily).
  std::vector<double> num_draft_prefilled_tokens;
  // One sample per generated token after a sequence's first: the time since the previous token
  // (a speculative step that yields k tokens gives k samples of its duration / k).
  std::vector<double> token_latencies_ms;
  std::int64_t num_proposed_tokens = 0;  // speculative candidates proposed over all calls
  std::int64_t num_accepted_tokens = 0;
};

class KILN_API PerfMetrics {
 public:
  double load_time_ms = 0;  // model (and draft) loading, once per pipeline
  RawPerfMetrics raw;

  MeanStd get_ttft() const;                     // ms
  MeanStd get_tpot() const;                     // ms per output token after the first
  MeanStd get_throughput() const;               // tokens / s
  MeanStd get_generate_duration() const;        // ms
  MeanStd get_tokenization_duration() const;    // ms
  MeanStd get_detokenization_duration() const;  // ms
  MeanStd get_num_input_tokens() const;
  MeanStd get_num_prefilled_tokens() const;
  MeanStd get_num_generated_tokens() const;
  MeanStd get_acceptance_rate() const;             // 0 ± 0 when no call was speculative
  MeanStd get_num_draft_prefilled_tokens() const;  // 0 ± 0 when no call had a draft model
  std::int64_t num_calls() const { return static_cast<std::int64_t>(raw.generate_durations_ms.size()); }

  // Pools the samples of both; load time is the first's (one pipeline) unless it has none.
  PerfMetrics operator+(const PerfMetrics& other) const;
  PerfMetrics& operator+=(const PerfMetrics& other);
};

KILN_API MeanStd mean_std(const std::vector<double>& samples);

}  // namespace kiln
