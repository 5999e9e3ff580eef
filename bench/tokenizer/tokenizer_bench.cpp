// Google Benchmark microbenchmarks of the tokenizer on committed fixtures: encode and decode of
// the extended golden corpus (every script, code, emoji, whitespace runs) and streaming decode.
// bytes_per_second is the corpus size in UTF-8 bytes.
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
  for (int n; file != nullptr && (n = gzread(file, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
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

}  // namespace

BENCHMARK_MAIN();
