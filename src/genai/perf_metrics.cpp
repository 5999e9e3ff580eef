#include "kiln/perf_metrics.hpp"

#include <cmath>

namespace kiln {

MeanStd mean_std(const std::vector<double>& samples) {
  if (samples.empty()) return {};
  double sum = 0;
  for (double x : samples) sum += x;
  const double mean = sum / static_cast<double>(samples.size());
  double squares = 0;
  for (double x : samples) squares += (x - mean) * (x - mean);
  return {mean, std::sqrt(squares / static_cast<double>(samples.size()))};
}

MeanStd PerfMetrics::get_ttft() const { return mean_std(raw.ttfts_ms); }
MeanStd PerfMetrics::get_tpot() const { return mean_std(raw.token_latencies_ms); }
MeanStd PerfMetrics::get_throughput() const { return mean_std(raw.throughputs); }
MeanStd PerfMetrics::get_generate_duration() const { return mean_std(raw.generate_durations_ms); }
MeanStd PerfMetrics::get_tokenization_duration() const { return mean_std(raw.tokenization_durations_ms); }
MeanStd PerfMetrics::get_detokenization_duration() const { return mean_std(raw.detokenization_durations_ms); }
MeanStd PerfMetrics::get_num_input_tokens() const { return mean_std(raw.num_input_tokens); }
MeanStd PerfMetrics::get_num_prefilled_tokens() const { return mean_std(raw.num_prefilled_tokens); }
MeanStd PerfMetrics::get_num_generated_tokens() const { return mean_std(raw.num_generated_tokens); }
MeanStd PerfMetrics::get_acceptance_rate() const { return mean_std(raw.acceptance_rates); }
MeanStd PerfMetrics::get_num_draft_prefilled_tokens() const { return mean_std(raw.num_draft_prefilled_tokens); }

PerfMetrics& PerfMetrics::operator+=(const PerfMetrics& other) {
  if (load_time_ms == 0) load_time_ms = other.load_time_ms;
  const auto append = [](std::vector<double>& to, const std::vector<double>& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  append(raw.generate_durations_ms, other.raw.generate_durations_ms);
  append(raw.tokenization_durations_ms, other.raw.tokenization_durations_ms);
  append(raw.detokenization_durations_ms, other.raw.detokenization_durations_ms);
  append(raw.ttfts_ms, other.raw.ttfts_ms);
  append(raw.queue_times_ms, other.raw.queue_times_ms);
  append(raw.throughputs, other.raw.throughputs);
  append(raw.num_input_tokens, other.raw.num_input_tokens);
  append(raw.num_prefilled_tokens, other.raw.num_prefilled_tokens);
  append(raw.num_generated_tokens, other.raw.num_generated_tokens);
  append(raw.acceptance_rates, other.raw.acceptance_rates);
  append(raw.num_draft_prefilled_tokens, other.raw.num_draft_prefilled_tokens);
  append(raw.token_latencies_ms, other.raw.token_latencies_ms);
  raw.num_proposed_tokens += other.raw.num_proposed_tokens;
  raw.num_accepted_tokens += other.raw.num_accepted_tokens;
  return *this;
}

PerfMetrics PerfMetrics::operator+(const PerfMetrics& other) const {
  PerfMetrics sum = *this;
  sum += other;
  return sum;
}

}  // namespace kiln
