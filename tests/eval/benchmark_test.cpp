// `kiln bench` (eval/benchmark.cpp). Oracles: the tokenizer, for prompts of exactly N tokens (and
// the seed model card's 26-token prompt, with a Llama 3 tokenizer); identities between a run's
// fields and the aggregates (TPOT and throughput, TTFT and prefill rate, mean and population
// standard deviation); the same result through the binary's text and --json.
#include "eval/benchmark.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tokenizer/tokenizer_fixtures.hpp"
#include "util/file_io.hpp"

namespace kiln::eval {
namespace {

const std::filesystem::path kTinyDraft = std::filesystem::path(KILN_SOURCE_DIR) / "models" / "kiln-tiny-draft";

BenchmarkOptions tiny(std::int64_t prompt_tokens, std::int64_t new_tokens, std::int64_t warmup, std::int64_t runs) {
  BenchmarkOptions o;
  o.model = testing::embedded_model_dir();
  o.prompt_tokens = prompt_tokens;
  o.new_tokens = new_tokens;
  o.warmup = warmup;
  o.runs = runs;
  return o;
}

TEST(Benchmark, PromptsHaveExactlyTheAskedTokens) {
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::embedded_model_dir());
  for (const std::int64_t count : {1, 2, 7, 26, 100, 450}) {
    EXPECT_EQ(static_cast<std::int64_t>(tokenizer.encode(text_with_tokens(tokenizer, count)).size()), count);
  }
}

// The model card's prompt is 25 tokens plus the BOS that the later Llama 3 tokenizers add (the
// llama3_1 fixture; the first Llama 3 release adds none).
TEST(Benchmark, TheSeedPromptIs26Llama3Tokens) {
  const auto source = testing::tokenizer_fixture("llama3_1");
  if (!source) GTEST_SKIP() << "the Llama 3 tokenizer needs KILN_EXTERNAL_FIXTURES (it may not be committed)";
  testing::TempDir scratch;
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::usable_tokenizer_dir(*source, scratch));
  EXPECT_EQ(text_with_tokens(tokenizer, 26),
            "Q: Explain how CPU cache memory improves processor performance, including its relationship with RAM, "
            "latency, and memory locality.\nA:");
  EXPECT_EQ(tokenizer.encode(text_with_tokens(tokenizer, 512)).size(), 512u);
}

double mean_of(const std::vector<BenchmarkRun>& runs, double (*field)(const BenchmarkRun&)) {
  double sum = 0;
  for (const BenchmarkRun& r : runs) sum += field(r);
  return sum / static_cast<double>(runs.size());
}

TEST(Benchmark, RunsDoTheSameWorkAndTheAggregatesFollowFromThem) {
  const BenchmarkResult r = run_benchmark(tiny(30, 12, 1, 3));
  ASSERT_EQ(r.runs.size(), 3u);
  EXPECT_GT(r.load_ms, 0);
  EXPECT_GT(r.peak_rss_bytes, 0u);
  for (const BenchmarkRun& run : r.runs) {
    EXPECT_EQ(run.prompt_tokens, 30);
    EXPECT_EQ(run.prefilled_tokens, 30);  // the same prompt every run, never served from a cache
    EXPECT_EQ(run.generated_tokens, 12);
    EXPECT_GT(run.ttft_ms, 0);
    EXPECT_GT(run.tpot_ms, 0);
    // The run's time holds its first token and the 11 after it.
    EXPECT_GE(run.generate_ms * (1 + 1e-9), run.ttft_ms + 11 * run.tpot_ms);
  }
  EXPECT_DOUBLE_EQ(r.ttft_ms.mean, mean_of(r.runs, [](const BenchmarkRun& x) { return x.ttft_ms; }));
  EXPECT_DOUBLE_EQ(r.tpot_ms.mean, mean_of(r.runs, [](const BenchmarkRun& x) { return x.tpot_ms; }));
  EXPECT_DOUBLE_EQ(r.throughput.mean, mean_of(r.runs, [](const BenchmarkRun& x) { return 1000 / x.tpot_ms; }));
  EXPECT_DOUBLE_EQ(r.prefill_tokens_per_s.mean,
                   mean_of(r.runs, [](const BenchmarkRun& x) { return 30000 / x.ttft_ms; }));
  const double mean = r.tpot_ms.mean;
  const double variance = mean_of(r.runs, [](const BenchmarkRun& x) { return x.tpot_ms * x.tpot_ms; }) - mean * mean;
  EXPECT_NEAR(r.tpot_ms.std, std::sqrt(std::max(0.0, variance)), 1e-6 * mean);  // population std

  const Json json = to_json(r);
  EXPECT_EQ(json["prompt_tokens"], 30);
  EXPECT_EQ(json["new_tokens"], 12);
  EXPECT_EQ(json["runs"].size(), 3u);
  EXPECT_EQ(json["runs"][2]["tpot_ms"].get<double>(), r.runs[2].tpot_ms);
  EXPECT_EQ(json["tpot_ms"]["mean"].get<double>(), r.tpot_ms.mean);
  EXPECT_EQ(json["throughput_tokens_per_s"]["std"].get<double>(), r.throughput.std);
}

TEST(Benchmark, WithADraftEveryRunStillMakesTheAskedTokens) {
  BenchmarkOptions o = tiny(20, 16, 0, 2);
  o.draft = kTinyDraft;
  const BenchmarkResult r = run_benchmark(o);
  for (const BenchmarkRun& run : r.runs) EXPECT_EQ(run.generated_tokens, 16);
  EXPECT_EQ(to_json(r)["draft"], kTinyDraft.string());
}

TEST(Benchmark, OneNewTokenHasNoTpot) {
  const BenchmarkResult r = run_benchmark(tiny(5, 1, 0, 2));
  const Json json = to_json(r);
  EXPECT_TRUE(json["tpot_ms"].is_null());
  EXPECT_TRUE(json["throughput_tokens_per_s"].is_null());
  EXPECT_TRUE(json["runs"][0]["tpot_ms"].is_null());
  EXPECT_GT(json["ttft_ms"]["mean"].get<double>(), 0);
}

TEST(Benchmark, WorkBeyondTheContextIsAClearError) {
  // kiln-tiny has 512 positions.
  EXPECT_KILN_ERROR(run_benchmark(tiny(500, 20, 0, 1)), "500 prompt tokens + 20 new tokens do not fit the context",
                    "512 positions");
  EXPECT_KILN_ERROR(run_benchmark(tiny(600, 4, 0, 1)), "600 tokens", "512");
  EXPECT_KILN_ERROR(run_benchmark(tiny(26, 128, 2, 0)), "--runs must be positive");
}

TEST(BenchmarkCli, TextAndJsonAgree) {
  testing::TempDir tmp;
  const auto json_path = tmp.path() / "bench.json";
  const auto r = testing::run_kiln({"bench", "--prompt-tokens", "9", "--new-tokens", "4", "--warmup", "0", "--runs",
                                    "2", "--property", "KV_CACHE_PRECISION=u8", "--json", json_path.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("KV_CACHE_PRECISION=u8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("9 prompt tokens, 4 new tokens, 0 warm-up + 2 runs, greedy, EOS ignored"), std::string::npos)
      << r.out;
  for (const char* line : {"load ", "TTFT ", "TPOT ", "throughput ", "prefill ", "peak RSS "}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " missing from\n" << r.out;
  }
  const Json json = read_json_file(json_path);
  EXPECT_EQ(json["runs"].size(), 2u);
  EXPECT_EQ(json["properties"]["KV_CACHE_PRECISION"], "u8");
  const std::string tpot = fmt::format("TPOT        {:.2f} ± {:.2f} ms/token", json["tpot_ms"]["mean"].get<double>(),
                                       json["tpot_ms"]["std"].get<double>());
  EXPECT_NE(r.out.find(tpot), std::string::npos) << tpot << " not in\n" << r.out;
}

TEST(BenchmarkCli, BadCountsNameTheBound) {
  auto r = testing::run_kiln({"bench", "--runs", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--runs: must be at least 1, got 0"), std::string::npos) << r.err;
  r = testing::run_kiln({"bench", "--warmup", "-1"});
  EXPECT_NE(r.err.find("--warmup: must be at least 0, got -1"), std::string::npos) << r.err;
  r = testing::run_kiln({"bench", "--new-tokens", "many"});
  EXPECT_NE(r.err.find("--new-tokens: many is not a number"), std::string::npos) << r.err;
}

// --json is opened before the runs: a path that cannot be written fails before any measuring.
TEST(BenchmarkCli, UnwritableJsonFailsBeforeTheRuns) {
  const auto r = testing::run_kiln({"bench", "--json", "/nonexistent-dir/bench.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("/nonexistent-dir/bench.json: cannot create"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(BenchmarkCli, AFailedBenchLeavesNoFile) {
  testing::TempDir tmp;
  const auto r = testing::run_kiln({"bench", "--prompt-tokens", "600", "--json", (tmp.path() / "bench.json").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("600 tokens"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path())) << "the opened --json file (or its temporary) was left behind";
}

TEST(BenchmarkCli, OneNewTokenPrintsNoTpot) {
  const auto r =
      testing::run_kiln({"bench", "--prompt-tokens", "3", "--new-tokens", "1", "--warmup", "0", "--runs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("TPOT        n/a (one new token)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kiln::eval
