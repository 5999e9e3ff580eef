#include "eval/benchmark.hpp"

#include "eval/memory_measure.hpp"
#include "kiln/llm_pipeline.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace kiln::eval {
namespace {

// The seed model card's benchmark prompt (26 tokens with the Llama 3 tokenizer and BOS), then
// plain technical prose for longer prompts.
constexpr std::string_view kPrompt =
    "Q: Explain how CPU cache memory improves processor performance, including its relationship with RAM, "
    "latency, and memory locality.\nA:";
constexpr std::string_view kContinuation =
    " A cache keeps recently used lines of memory close to the core. When the processor reads an address, the "
    "cache is checked first; a hit costs a few cycles, a miss sends the request on to the next level and finally "
    "to DRAM, which costs hundreds. Programs touch memory in patterns: the same data again soon (temporal "
    "locality) and nearby data next (spatial locality), so whole lines are fetched and kept. Modern chips stack "
    "several levels, small and fast near the core, large and slower further away, and share the last level "
    "between cores.";

MeanStd over_runs(const std::vector<BenchmarkRun>& runs, double (*field)(const BenchmarkRun&)) {
  std::vector<double> samples;
  for (const BenchmarkRun& r : runs) samples.push_back(field(r));
  return mean_std(samples);
}

Json to_json(const MeanStd& v) { return {{"mean", v.mean}, {"std", v.std}}; }

// TPOT and throughput, or null where the options measure none (BenchmarkOptions::measures_tpot).
Json inter_token(const BenchmarkResult& r, Json value) { return r.options.measures_tpot() ? std::move(value) : Json(); }

}  // namespace

std::string text_with_tokens(const Tokenizer& tokenizer, std::int64_t count) {
  std::string source(kPrompt);
  while (static_cast<std::int64_t>(tokenizer.encode(source).size()) < count + 8) source += kContinuation;
  const std::vector<std::int32_t> ids = tokenizer.encode(source, /*add_special_tokens=*/false);
  const std::int64_t specials = static_cast<std::int64_t>(tokenizer.encode("").size());
  // Cutting the ids and decoding may merge differently at the cut; try a few cut points.
  for (std::int64_t take = count - specials; take <= count - specials + 8; ++take) {
    if (take < 0 || take > static_cast<std::int64_t>(ids.size())) continue;
    std::string text = tokenizer.decode(std::span(ids).first(static_cast<std::size_t>(take)), true);
    if (static_cast<std::int64_t>(tokenizer.encode(text).size()) == count) return text;
  }
  fail("cannot build a prompt of exactly {} tokens with this tokenizer", count);
}

GenerationConfig benchmark_config(GenerationConfig config, std::int64_t new_tokens) {
  config.max_new_tokens = new_tokens;
  config.max_length.reset();
  config.min_new_tokens = 0;
  config.ignore_eos = true;
  config.do_sample = false;
  config.apply_chat_template = false;
  config.stop_strings.clear();
  config.stop_token_ids.clear();
  return config;
}

BenchmarkResult run_benchmark(const BenchmarkOptions& o) {
  if (o.prompt_tokens <= 0 || o.new_tokens <= 0 || o.warmup < 0 || o.runs <= 0) {
    fail("bench: --prompt-tokens, --new-tokens and --runs must be positive and --warmup not negative");
  }
  BenchmarkResult result;
  result.options = o;
  PipelineProperties properties;
  properties.device_properties = o.properties;
  properties.context_tokens = o.prompt_tokens + o.new_tokens + 16;
  properties.kv_cache_sequences = 1;
  properties.adaptive_speculation = false;  // the same work every run
  // Every run repeats the prompt: a prefix cache would serve it from the first run's blocks.
  properties.scheduler.enable_prefix_caching = false;
  if (o.draft) properties.draft = draft_model(*o.draft, o.device);
  Stopwatch load_clock;
  LLMPipeline pipe(o.model, o.device, properties);
  result.load_ms = load_clock.elapsed_ms();

  result.prompt = text_with_tokens(pipe.get_tokenizer(), o.prompt_tokens);
  const GenerationConfig config = benchmark_config(pipe.get_generation_config(), o.new_tokens);
  for (std::int64_t i = 0; i < o.warmup + o.runs; ++i) {
    const DecodedResults r = pipe.generate(result.prompt, config);
    const RawPerfMetrics& raw = r.perf_metrics.raw;
    BenchmarkRun run;
    run.ttft_ms = raw.ttfts_ms.empty() ? 0.0 : raw.ttfts_ms.front();
    run.tpot_ms = mean_std(raw.token_latencies_ms).mean;
    run.generate_ms = raw.generate_durations_ms.front();
    run.prompt_tokens = static_cast<std::int64_t>(raw.num_input_tokens.front());
    run.prefilled_tokens = static_cast<std::int64_t>(raw.num_prefilled_tokens.front());
    run.generated_tokens = static_cast<std::int64_t>(raw.num_generated_tokens.front());
    if (run.prompt_tokens != o.prompt_tokens) {
      fail("bench: a run took {} prompt tokens, expected {}", run.prompt_tokens, o.prompt_tokens);
    }
    if (run.generated_tokens != o.new_tokens) {  // EOS and stops are off: only the context ends a run early
      fail(
          "bench: {} prompt tokens + {} new tokens do not fit the context: a run stopped at {} positions, the "
          "model's limit; ask for fewer --prompt-tokens or --new-tokens",
          o.prompt_tokens, o.new_tokens, run.prompt_tokens + run.generated_tokens);
    }
    if (i >= o.warmup) result.runs.push_back(run);
  }
  result.ttft_ms = over_runs(result.runs, [](const BenchmarkRun& r) { return r.ttft_ms; });
  result.tpot_ms = over_runs(result.runs, [](const BenchmarkRun& r) { return r.tpot_ms; });
  result.throughput =
      over_runs(result.runs, [](const BenchmarkRun& r) { return r.tpot_ms > 0 ? 1000.0 / r.tpot_ms : 0.0; });
  result.prefill_tokens_per_s = over_runs(result.runs, [](const BenchmarkRun& r) {
    return r.ttft_ms > 0 ? 1000.0 * double(r.prompt_tokens) / r.ttft_ms : 0.0;
  });
  result.peak_rss_bytes = peak_rss_bytes().value_or(0);
  return result;
}

Json to_json(const BenchmarkResult& r) {
  Json runs = Json::array();
  for (const BenchmarkRun& run : r.runs) {
    runs.push_back({{"ttft_ms", run.ttft_ms},
                    {"tpot_ms", inter_token(r, run.tpot_ms)},
                    {"generate_ms", run.generate_ms},
                    {"prompt_tokens", run.prompt_tokens},
                    {"prefilled_tokens", run.prefilled_tokens},
                    {"generated_tokens", run.generated_tokens}});
  }
  Json properties = Json::object();
  for (const auto& [name, value] : r.options.properties) properties[name] = value;
  return {{"model", r.options.model.string()},
          {"draft", r.options.draft ? r.options.draft->string() : ""},
          {"device", r.options.device},
          {"properties", properties},
          {"prompt_tokens", r.options.prompt_tokens},
          {"new_tokens", r.options.new_tokens},
          {"warmup", r.options.warmup},
          {"load_ms", r.load_ms},
          {"ttft_ms", to_json(r.ttft_ms)},
          {"tpot_ms", inter_token(r, to_json(r.tpot_ms))},
          {"throughput_tokens_per_s", inter_token(r, to_json(r.throughput))},
          {"prefill_tokens_per_s", to_json(r.prefill_tokens_per_s)},
          {"peak_rss_bytes", r.peak_rss_bytes},
          {"runs", runs}};
}

}  // namespace kiln::eval
