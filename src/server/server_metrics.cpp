#include "server/server_metrics.hpp"

#include <algorithm>
#include <array>
#include <functional>

#include <fmt/format.h>

namespace kiln::server {
namespace {

constexpr std::array<const char*, 4> kFinishReasons = {"stop", "length", "abort", "error"};

// vLLM's bucket bounds, so dashboards built for it read kiln's histograms the same way.
std::vector<double> ttft_bounds() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> inter_token_bounds() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> e2e_bounds() {
  return {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0};
}

void header(std::string& out, const std::string& name, const std::string& help, const char* type) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// A snapshot of every model, taken once per scrape.
struct Scraped {
  std::string labels;
  PipelineMetrics engine;
  ServerMetrics::Recorded recorded;
};

using Value = std::function<double(const Scraped&)>;

void family(std::string& out, const std::vector<Scraped>& models, const std::string& name, const std::string& help,
            const char* type, const Value& value) {
  header(out, name, help, type);
  for (const Scraped& m : models) fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, m.labels, value(m));
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[static_cast<std::size_t>(bucket)];
  sum_ += value;
  ++count_;
}

void Histogram::write_samples(std::string& out, const std::string& name, const std::string& labels) const {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? fmt::format("{}", bounds_[i]) : "+Inf";
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, le, cumulative);
  }
  fmt::format_to(std::back_inserter(out), "{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels, sum_, name, labels,
                 count_);
}

ServerMetrics::ServerMetrics(std::string model_name)
    : labels_("model_name=\"" + model_name + "\""),
      recorded_{Histogram(ttft_bounds()), Histogram(inter_token_bounds()), Histogram(e2e_bounds()),
                Histogram(e2e_bounds())} {}

void ServerMetrics::record(const PerfMetrics& metrics, const std::string& finish_reason) {
  std::lock_guard lock(mutex_);
  Recorded& r = recorded_;
  const auto reason = std::find(kFinishReasons.begin(), kFinishReasons.end(), finish_reason) - kFinishReasons.begin();
  ++r.finished[std::min<std::size_t>(static_cast<std::size_t>(reason), kFinishReasons.size() - 1)];
  for (double ms : metrics.raw.ttfts_ms) r.ttft.observe(ms / 1000.0);
  for (double ms : metrics.raw.token_latencies_ms) r.inter_token.observe(ms / 1000.0);
  for (double ms : metrics.raw.generate_durations_ms) r.e2e.observe(ms / 1000.0);
  for (double ms : metrics.raw.queue_times_ms) r.queue.observe(ms / 1000.0);
  r.draft_tokens += metrics.raw.num_proposed_tokens;
  r.accepted_tokens += metrics.raw.num_accepted_tokens;
}

ServerMetrics::Recorded ServerMetrics::recorded() const {
  std::lock_guard lock(mutex_);
  return recorded_;
}

std::string prometheus_text(std::span<const ModelSample> samples) {
  std::vector<Scraped> models;
  for (const ModelSample& s : samples) models.push_back({s.recorded->labels(), s.engine, s.recorded->recorded()});
  std::string out;
  const Value running = [](const Scraped& m) { return double(m.engine.scheduled_requests); };
  const Value waiting = [](const Scraped& m) { return double(m.engine.waiting_requests); };
  const Value kv = [](const Scraped& m) { return m.engine.cache_usage / 100.0; };  // a percentage in PipelineMetrics
  for (const std::string p : {"kiln", "vllm"}) {
    family(out, models, p + ":num_requests_running", "Requests the scheduler runs now.", "gauge", running);
    family(out, models, p + ":num_requests_waiting", "Requests waiting for their turn or for KV blocks.", "gauge",
           waiting);
    family(out, models, p + ":kv_cache_usage_perc", "Fraction of KV-cache blocks in use (0 to 1).", "gauge", kv);
  }
  family(out, models, "vllm:gpu_cache_usage_perc", "Fraction of KV-cache blocks in use (0 to 1; vLLM's older name).",
         "gauge", kv);
  const auto engine_counter = [&](const char* name, const char* help, std::int64_t PipelineMetrics::*field) {
    family(out, models, name, help, "counter", [field](const Scraped& m) { return double(m.engine.*field); });
  };
  family(out, models, "kiln:num_kv_blocks", "KV-cache blocks in the pool.", "gauge",
         [](const Scraped& m) { return double(m.engine.num_kv_blocks); });
  engine_counter("kiln:prompt_tokens_total", "Prompt tokens of the requests added.",
                 &PipelineMetrics::num_prompt_tokens);
  engine_counter("kiln:generation_tokens_total", "Tokens generated by the requests that ended.",
                 &PipelineMetrics::num_generated_tokens);
  engine_counter("kiln:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
                 &PipelineMetrics::prefix_cache_queries);
  engine_counter("kiln:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.",
                 &PipelineMetrics::prefix_cache_hits);
  engine_counter("kiln:num_preemptions_total", "Sequences preempted for KV room (recomputed later).",
                 &PipelineMetrics::num_preemptions);
  engine_counter("kiln:engine_steps_total", "Engine steps run.", &PipelineMetrics::num_steps);
  family(out, models, "kiln:spec_decode_num_draft_tokens_total", "Speculative candidates proposed (ended requests).",
         "counter", [](const Scraped& m) { return double(m.recorded.draft_tokens); });
  family(out, models, "kiln:spec_decode_num_accepted_tokens_total", "Speculative candidates accepted (ended requests).",
         "counter", [](const Scraped& m) { return double(m.recorded.accepted_tokens); });
  header(out, "kiln:request_success_total", "Requests ended, by finish reason.", "counter");
  for (const Scraped& m : models) {
    for (std::size_t i = 0; i < kFinishReasons.size(); ++i) {
      fmt::format_to(std::back_inserter(out), "kiln:request_success_total{{{},finished_reason=\"{}\"}} {}\n", m.labels,
                     kFinishReasons[i], m.recorded.finished[i]);
    }
  }
  const auto histograms = [&](const char* name, const char* help, Histogram ServerMetrics::Recorded::*field) {
    header(out, name, help, "histogram");
    for (const Scraped& m : models) (m.recorded.*field).write_samples(out, name, m.labels);
  };
  histograms("kiln:time_to_first_token_seconds", "Time to first token.", &ServerMetrics::Recorded::ttft);
  histograms("kiln:inter_token_latency_seconds", "Time between two output tokens.",
             &ServerMetrics::Recorded::inter_token);
  histograms("kiln:e2e_request_latency_seconds", "Request latency from arrival to its end.",
             &ServerMetrics::Recorded::e2e);
  histograms("kiln:request_queue_time_seconds", "Time from arrival to the first step that scheduled the request.",
             &ServerMetrics::Recorded::queue);
  return out;
}

}  // namespace kiln::server
