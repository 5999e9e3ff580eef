#include "eval/serving_benchmark.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#include "eval/benchmark.hpp"
#include "kiln/continuous_batching_pipeline.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace kiln::eval {
namespace {

struct RequestTiming {
  double ttft_ms = 0, e2e_ms = 0;
  std::int64_t tokens = 0;
  std::vector<double> itl_ms;
};

Percentiles summarize(const std::vector<double>& samples) {
  Percentiles p;
  if (samples.empty()) return p;
  double sum = 0;
  for (double s : samples) sum += s;
  p.mean = sum / double(samples.size());
  p.p50 = percentile(samples, 50);
  p.p90 = percentile(samples, 90);
  p.p99 = percentile(samples, 99);
  return p;
}

// The base prompt's ids with request `index` written into the first position after the shared
// prefix (after the first token when none is shared), so prompts differ from there on and no
// request reuses more of another's cache than the shared prefix.
std::vector<std::int32_t> distinct_prompt(std::vector<std::int32_t> ids, std::int64_t index, std::int64_t vocab,
                                          std::int64_t shared_prefix) {
  const auto at = static_cast<std::size_t>(
      std::clamp<std::int64_t>(std::max<std::int64_t>(shared_prefix, 1), 0, static_cast<std::int64_t>(ids.size()) - 1));
  ids[at] = static_cast<std::int32_t>((static_cast<std::int64_t>(ids[at]) + 1 + index * 7919) % vocab);
  return ids;
}

RequestTiming run_request(ContinuousBatchingPipeline& pipe, std::uint64_t id, std::vector<std::int32_t> prompt,
                          const GenerationConfig& config) {
  RequestTiming t;
  const Stopwatch clock;
  GenerationHandle h = pipe.add_request(id, std::move(prompt), config);
  double last_ms = 0;
  for (GenerationOutputs outs = h->read(); !outs.empty(); outs = h->read()) {
    const double now = clock.elapsed_ms();
    const auto it = outs.find(0);
    if (it == outs.end() || it->second.generated_ids.empty()) continue;
    const auto k = static_cast<std::int64_t>(it->second.generated_ids.size());
    if (t.tokens == 0) {
      t.ttft_ms = now;
      for (std::int64_t i = 1; i < k; ++i) t.itl_ms.push_back(0);  // arrived with the first
    } else {
      for (std::int64_t i = 0; i < k; ++i) t.itl_ms.push_back((now - last_ms) / double(k));
    }
    t.tokens += k;
    last_ms = now;
  }
  t.e2e_ms = clock.elapsed_ms();
  if (h->get_status() != GenerationStatus::FINISHED) {
    fail("bench: request {} ended {}: {}", id, to_string(h->get_status()), h->error());
  }
  return t;
}

}  // namespace

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double rank = p / 100.0 * double(samples.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, samples.size() - 1);
  return samples[lo] + (samples[hi] - samples[lo]) * (rank - double(lo));
}

ServingBenchmarkResult run_serving_benchmark(const ServingBenchmarkOptions& o) {
  if (o.prompt_tokens <= 0 || o.new_tokens <= 0 || o.concurrency <= 0 || o.requests <= 0) {
    fail("bench: --prompt-tokens, --new-tokens, --concurrency and --requests must be positive");
  }
  if (o.shared_prefix_tokens < 0 || o.shared_prefix_tokens >= o.prompt_tokens) {
    fail("bench: --shared-prefix-tokens must be below --prompt-tokens ({}), got {}", o.prompt_tokens,
         o.shared_prefix_tokens);
  }
  ServingBenchmarkResult result;
  result.options = o;
  PipelineProperties properties;
  properties.device_properties = o.properties;
  properties.context_tokens = o.prompt_tokens + o.new_tokens + 16;
  properties.kv_cache_sequences = o.concurrency;  // every request in flight fits: no preemption by design
  SchedulerConfig scheduler;
  scheduler.max_num_batched_tokens = o.max_num_batched_tokens;
  scheduler.max_num_seqs = static_cast<std::int32_t>(std::max<std::int64_t>(o.concurrency, 1));
  scheduler.enable_prefix_caching = o.prefix_caching;
  const Stopwatch load_clock;
  ContinuousBatchingPipeline pipe(o.model, scheduler, o.device, properties);
  result.load_ms = load_clock.elapsed_ms();

  const Tokenizer& tokenizer = pipe.get_tokenizer();
  const std::vector<std::int32_t> base = tokenizer.encode(text_with_tokens(tokenizer, o.prompt_tokens));
  const std::int64_t vocab = tokenizer.vocab_size();
  const GenerationConfig config = benchmark_config(pipe.get_config(), o.new_tokens);

  // One unmeasured request first: page in the weights, size the scratch buffers.
  run_request(pipe, o.requests, distinct_prompt(base, o.requests, vocab, o.shared_prefix_tokens), config);

  std::vector<RequestTiming> timings(static_cast<std::size_t>(o.requests));
  std::atomic<std::int64_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  const Stopwatch wall;
  std::vector<std::thread> clients;
  for (std::int64_t c = 0; c < std::min(o.concurrency, o.requests); ++c) {
    clients.emplace_back([&] {
      for (std::int64_t i = next++; i < o.requests; i = next++) {
        try {
          timings[static_cast<std::size_t>(i)] = run_request(
              pipe, static_cast<std::uint64_t>(i), distinct_prompt(base, i, vocab, o.shared_prefix_tokens), config);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  result.wall_s = wall.elapsed_ms() / 1000.0;
  if (error) std::rethrow_exception(error);

  std::vector<double> ttft, tpot, itl, e2e;
  for (const RequestTiming& t : timings) {
    if (t.tokens != o.new_tokens) fail("bench: a request generated {} tokens, expected {}", t.tokens, o.new_tokens);
    result.generated_tokens += t.tokens;
    ttft.push_back(t.ttft_ms);
    e2e.push_back(t.e2e_ms);
    if (t.tokens > 1) tpot.push_back((t.e2e_ms - t.ttft_ms) / double(t.tokens - 1));
    itl.insert(itl.end(), t.itl_ms.begin(), t.itl_ms.end());
  }
  result.output_tokens_per_s = double(result.generated_tokens) / result.wall_s;
  result.requests_per_s = double(o.requests) / result.wall_s;
  result.ttft_ms = summarize(ttft);
  result.tpot_ms = summarize(tpot);
  result.itl_ms = summarize(itl);
  result.e2e_ms = summarize(e2e);
  const PipelineMetrics m = pipe.get_metrics();
  result.preemptions = m.num_preemptions;
  result.max_cache_usage = m.max_cache_usage;
  result.prefix_cache_hits = m.prefix_cache_hits;
  return result;
}

Json to_json(const ServingBenchmarkResult& r) {
  const auto p = [](const Percentiles& v) {
    return Json{{"mean", v.mean}, {"p50", v.p50}, {"p90", v.p90}, {"p99", v.p99}};
  };
  Json properties = Json::object();
  for (const auto& [name, value] : r.options.properties) properties[name] = value;
  return {{"model", r.options.model.string()},
          {"device", r.options.device},
          {"properties", properties},
          {"prompt_tokens", r.options.prompt_tokens},
          {"new_tokens", r.options.new_tokens},
          {"concurrency", r.options.concurrency},
          {"requests", r.options.requests},
          {"max_num_batched_tokens", r.options.max_num_batched_tokens},
          {"prefix_caching", r.options.prefix_caching},
          {"shared_prefix_tokens", r.options.shared_prefix_tokens},
          {"prefix_cache_hit_tokens", r.prefix_cache_hits},
          {"load_ms", r.load_ms},
          {"wall_s", r.wall_s},
          {"generated_tokens", r.generated_tokens},
          {"output_tokens_per_s", r.output_tokens_per_s},
          {"requests_per_s", r.requests_per_s},
          {"ttft_ms", p(r.ttft_ms)},
          {"tpot_ms", p(r.tpot_ms)},
          {"itl_ms", p(r.itl_ms)},
          {"e2e_ms", p(r.e2e_ms)},
          {"preemptions", r.preemptions},
          {"max_cache_usage_percent", r.max_cache_usage}};
}

}  // namespace kiln::eval
