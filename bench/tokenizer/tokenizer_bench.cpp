// Google Benchmark microbenchmarks of the tokenizer on committed fixtures: encode and decode of
// the extended golden corpus (every script, code, emoji, whitespace runs), streaming decode, and
// long runs of one character. bytes_per_second counts input UTF-8 bytes.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <filesystem>
#include <sstream>

#include "kiln/tokenizer.hpp"
#include "util/json.hpp"

namespace {

const std::filesystem::path kData = KILN_TOKENIZER_BENCH_DATA;

std::string gunzip(const std::filesystem::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  std::string out;
  char buffer[1 << 16];
  for (int n; file != nullptr && (n = gzread(file, buffer, sizeof buffer)) > 0;)
    out.append(buffer, static_cast<std::size_t>(n));
  if (file != nullptr) gzclose(file);
  return out;
}

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> lines = [] {
    std::vector<std::string> out;
    std::istringstream in(gunzip(kData / "extended_corpus.jsonl.gz"));
    for (std::string line; std::getline(in, line);) out.push_back(kiln::Json::parse(line).at("text"));
    return out;
  }();
  return lines;
}

std::size_t corpus_bytes() {
  std::size_t n = 0;
  for (const auto& line : corpus()) n += line.size();
  return n;
}

const kiln::Tokenizer& mistral() {
  static const kiln::Tokenizer tokenizer = kiln::Tokenizer::from_dir(kData / "mistral7b");
  return tokenizer;
}

void BM_EncodeCorpus(benchmark::State& state) {
  const auto& tokenizer = mistral();
  std::size_t tokens = 0;
  for (auto _ : state) {
    for (const auto& line : corpus()) tokens += tokenizer.encode(line).size();
  }
  benchmark::DoNotOptimize(tokens);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * corpus_bytes()));
}
BENCHMARK(BM_EncodeCorpus)->Unit(benchmark::kMillisecond);

void BM_DecodeCorpus(benchmark::State& state) {
  const auto& tokenizer = mistral();
  std::vector<std::vector<std::int32_t>> encoded;
  for (const auto& line : corpus()) encoded.push_back(tokenizer.encode(line));
  std::size_t chars = 0;
  for (auto _ : state) {
    for (const auto& ids : encoded) chars += tokenizer.decode(ids).size();
  }
  benchmark::DoNotOptimize(chars);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * corpus_bytes()));
}
BENCHMARK(BM_DecodeCorpus)->Unit(benchmark::kMillisecond);

void BM_StreamingDecodeCorpus(benchmark::State& state) {
  const auto& tokenizer = mistral();
  std::vector<std::vector<std::int32_t>> encoded;
  for (const auto& line : corpus()) encoded.push_back(tokenizer.encode(line));
  std::size_t chars = 0;
  for (auto _ : state) {
    for (const auto& ids : encoded) {
      kiln::IncrementalDetokenizer stream(tokenizer);
      for (const std::int32_t id : ids) chars += stream.push(id).size();
      chars += stream.flush().size();
    }
  }
  benchmark::DoNotOptimize(chars);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * corpus_bytes()));
}
BENCHMARK(BM_StreamingDecodeCorpus)->Unit(benchmark::kMillisecond);

// Long runs (1 MB of spaces, one 1 MB word, newlines, digits): one pre-token of a megabyte goes
// through the merge heap, so time grows as n log n, never n^2.
void BM_LongRun(benchmark::State& state) {
  const auto& tokenizer = mistral();
  const std::size_t n = static_cast<std::size_t>(state.range(1));
  std::string text;
  switch (state.range(0)) {
    case 0: text.assign(n, ' '); break;
    case 1: text.assign(n, 'x'); break;
    case 2: text.assign(n, '\n'); break;
    default: text.assign(n, '7'); break;
  }
  for (auto _ : state) benchmark::DoNotOptimize(tokenizer.encode(text));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_LongRun)->ArgsProduct({{0, 1, 2, 3}, {1 << 16, 1 << 20}})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
