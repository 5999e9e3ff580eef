// `kiln bench --model DIR [--device CPU] [--property NAME=VALUE] [--prompt-tokens 26]
// [--new-tokens 128] [--warmup 2] [--runs 5] [--draft DIR] [--json FILE]`: pipeline load time,
// TTFT, TPOT and throughput (mean ± std over the runs), prefill tokens/s and peak RSS, measured
// as OpenVINO GenAI's benchmark does (greedy, EOS ignored). The work is eval/benchmark.cpp.
// With `--concurrency N [--requests M]`: N users at once on a ContinuousBatchingPipeline, output
// tokens/s and TTFT / TPOT / inter-token / end-to-end percentiles (eval/serving_benchmark.cpp).
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/device_flags.hpp"
#include "cli/json_output.hpp"
#include "cli/option_checks.hpp"
#include "eval/benchmark.hpp"
#include "eval/serving_benchmark.hpp"
#include "util/error.hpp"

namespace kiln::cli {
namespace {

struct BenchFlags {
  std::string model, draft, json;
  DeviceFlags device;
  std::int64_t prompt_tokens = 26, new_tokens = 128, warmup = 2, runs = 5;
  std::int64_t concurrency = 0, requests = 0, max_num_batched_tokens = 2048, shared_prefix_tokens = 0;
  bool no_prefix_caching = false;
};

void print(const eval::ServingBenchmarkResult& r) {
  const auto p = [](const eval::Percentiles& v) {
    return fmt::format("mean {:8.2f}  p50 {:8.2f}  p90 {:8.2f}  p99 {:8.2f} ms", v.mean, v.p50, v.p90, v.p99);
  };
  const eval::ServingBenchmarkOptions& o = r.options;
  fmt::print("kiln bench: {} on {}, {} requests, {} at a time\n", o.model.string(), o.device, o.requests,
             o.concurrency);
  fmt::print("  {} prompt tokens (distinct), {} new tokens, greedy, EOS ignored\n", o.prompt_tokens, o.new_tokens);
  fmt::print("  load        {:.2f} ms\n", r.load_ms);
  fmt::print("  output      {:.2f} tokens/s ({} tokens in {:.2f} s, {:.2f} requests/s)\n", r.output_tokens_per_s,
             r.generated_tokens, r.wall_s, r.requests_per_s);
  fmt::print("  TTFT        {}\n", p(r.ttft_ms));
  fmt::print("  TPOT        {}\n", p(r.tpot_ms));
  fmt::print("  ITL         {}\n", p(r.itl_ms));
  fmt::print("  end-to-end  {}\n", p(r.e2e_ms));
  fmt::print("  KV cache    {:.1f}% at most, {} preemptions, {} prompt tokens from the prefix cache{}\n",
             r.max_cache_usage, r.preemptions, r.prefix_cache_hits, o.prefix_caching ? "" : " (off)");
}

void run_serving(const BenchFlags& f) {
  eval::ServingBenchmarkOptions o;
  o.model = f.model.empty() ? default_model_dir() : std::filesystem::path(f.model);
  o.device = f.device.device;
  o.properties = device_property_map(f.device);
  o.prompt_tokens = f.prompt_tokens;
  o.new_tokens = f.new_tokens;
  o.concurrency = f.concurrency;
  o.requests = f.requests > 0 ? f.requests : 4 * f.concurrency;
  o.max_num_batched_tokens = f.max_num_batched_tokens;
  o.shared_prefix_tokens = f.shared_prefix_tokens;
  o.prefix_caching = !f.no_prefix_caching;
  JsonOutput json(f.json);
  const eval::ServingBenchmarkResult r = eval::run_serving_benchmark(o);
  print(r);
  json.write(eval::to_json(r));
}

void print(const eval::BenchmarkResult& r) {
  const auto pm = [](MeanStd v, const char* unit) { return fmt::format("{:.2f} ± {:.2f} {}", v.mean, v.std, unit); };
  const eval::BenchmarkOptions& o = r.options;
  std::string properties;
  for (const auto& [name, value] : o.properties) properties += fmt::format(" {}={}", name, value);
  fmt::print("kiln bench: {} on {}{}{}\n", o.model.string(), o.device, properties,
             o.draft ? " with draft " + o.draft->string() : "");
  fmt::print("  {} prompt tokens, {} new tokens, {} warm-up + {} runs, greedy, EOS ignored\n", o.prompt_tokens,
             o.new_tokens, o.warmup, o.runs);
  fmt::print("  load        {:.2f} ms\n", r.load_ms);
  fmt::print("  TTFT        {}\n", pm(r.ttft_ms, "ms"));
  const bool inter_token = o.measures_tpot();
  fmt::print("  TPOT        {}\n", inter_token ? pm(r.tpot_ms, "ms/token") : "n/a (one new token)");
  fmt::print("  throughput  {}\n", inter_token ? pm(r.throughput, "tokens/s") : "n/a (one new token)");
  fmt::print("  prefill     {}\n", pm(r.prefill_tokens_per_s, "tokens/s"));
  fmt::print("  peak RSS    {:.1f} MiB\n", double(r.peak_rss_bytes) / (1 << 20));
}

void run(const BenchFlags& f) {
  if (f.concurrency > 0) {
    if (!f.draft.empty()) fail("bench: --draft is not measured with --concurrency yet");
    return run_serving(f);
  }
  if (f.requests > 0 || f.shared_prefix_tokens > 0 || f.no_prefix_caching) {
    fail("bench: --requests, --shared-prefix-tokens and --no-prefix-caching need --concurrency");
  }
  eval::BenchmarkOptions o;
  o.model = f.model.empty() ? default_model_dir() : std::filesystem::path(f.model);
  if (!f.draft.empty()) o.draft = f.draft;
  o.device = f.device.device;
  o.properties = device_property_map(f.device);
  o.prompt_tokens = f.prompt_tokens;
  o.new_tokens = f.new_tokens;
  o.warmup = f.warmup;
  o.runs = f.runs;
  JsonOutput json(f.json);  // before the runs: an unwritable path fails now, not after them
  const eval::BenchmarkResult r = eval::run_benchmark(o);
  print(r);
  json.write(eval::to_json(r));
}

}  // namespace

void register_bench_command(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  auto* cmd = app.add_subcommand("bench", "Measure load time, TTFT, TPOT, throughput and peak memory");
  cmd->add_option("--model,-m", f->model, "Model directory or GGUF file (default: $KILN_MODEL or the embedded model)");
  add_device_flags(*cmd, f->device);
  cmd->add_option("--prompt-tokens", f->prompt_tokens, "Prompt length in tokens")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--new-tokens", f->new_tokens, "Tokens generated per run")->capture_default_str()->check(at_least(1));
  cmd->add_option("--warmup", f->warmup, "Unmeasured runs first")->capture_default_str()->check(at_least(0));
  cmd->add_option("--runs", f->runs, "Measured runs")->capture_default_str()->check(at_least(1));
  cmd->add_option("--draft", f->draft, "Draft model for speculative decoding");
  cmd->add_option("--concurrency", f->concurrency,
                  "Serve this many requests at once (continuous batching) and report percentiles")
      ->check(at_least(1));
  cmd->add_option("--requests", f->requests, "With --concurrency: requests in all (default: 4 x concurrency)")
      ->check(at_least(1));
  cmd->add_option("--max-num-batched-tokens", f->max_num_batched_tokens,
                  "With --concurrency: tokens one step may compute (the scheduler's budget)")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--shared-prefix-tokens", f->shared_prefix_tokens,
                  "With --concurrency: every prompt starts with the same this many tokens (a system prompt)")
      ->check(at_least(0));
  cmd->add_flag("--no-prefix-caching", f->no_prefix_caching, "With --concurrency: turn the prefix cache off");
  cmd->add_option("--json", f->json, "Also write the results as JSON to this file");
  cmd->callback([f] { run(*f); });
}

}  // namespace kiln::cli
