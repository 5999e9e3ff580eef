// `kiln bench`'s measurement, OpenVINO GenAI's benchmark method: load a pipeline (timed), then
// warm-up and measured generate() calls over a prompt of exactly N tokens, greedy with EOS
// ignored so every run produces the same number of tokens; statistics are mean ± population
// standard deviation over the measured runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/generation_config.hpp"
#include "kiln/perf_metrics.hpp"
#include "kiln/tokenizer.hpp"
#include "util/json.hpp"

namespace kiln::eval {

struct BenchmarkOptions {
  std::filesystem::path model;
  std::optional<std::filesystem::path> draft;
  std::string device = "CPU";
  std::map<std::string, std::string> properties;
  std::int64_t prompt_tokens = 26;
  std::int64_t new_tokens = 128;
  std::int64_t warmup = 2;
  std::int64_t runs = 5;

  // TPOT and throughput are the time between new tokens: one new token has none to measure.
  bool measures_tpot() const { return new_tokens > 1; }
};

struct BenchmarkRun {
  double ttft_ms = 0;
  double tpot_ms = 0;  // mean latency of the tokens after the first
  double generate_ms = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t prefilled_tokens = 0;  // of those, computed in this run (all: no cache serves a run)
  std::int64_t generated_tokens = 0;
};

struct BenchmarkResult {
  BenchmarkOptions options;
  std::string prompt;  // the text given to generate()
  double load_ms = 0;
  std::vector<BenchmarkRun> runs;
  MeanStd ttft_ms, tpot_ms;
  MeanStd throughput;            // 1000 / TPOT per run: decode tokens per second, as OpenVINO reports it
  MeanStd prefill_tokens_per_s;  // prompt tokens / TTFT per run
  std::uint64_t peak_rss_bytes = 0;
};

// The model's generation config made a benchmark's: greedy, EOS ignored and no stop strings or
// tokens (so every run generates exactly new_tokens), the prompt taken as it is.
GenerationConfig benchmark_config(GenerationConfig model_defaults, std::int64_t new_tokens);

// Throws kiln::Error when the model does not load, the prompt cannot be built with exactly
// prompt_tokens tokens, or a run produces a different number of tokens.
BenchmarkResult run_benchmark(const BenchmarkOptions& options);

// Options, aggregates and runs; TPOT and throughput are null with one new token (no time
// between tokens to measure).
Json to_json(const BenchmarkResult& result);

// A text the tokenizer encodes (special tokens included, as generate() does) into exactly
// `count` tokens: the seed benchmark's question, continued with a fixed passage as needed.
// Throws kiln::Error when no cut of the passage gives exactly that many.
std::string text_with_tokens(const Tokenizer& tokenizer, std::int64_t count);

}  // namespace kiln::eval
