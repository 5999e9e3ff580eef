// Encode throughput of kiln's tokenizer on one text file, one thread, for the side-by-side with
// PyPI `tokenizers` (bench/compare/tokenizer_throughput.py). Prints one JSON object: the best of
// --repeat runs in CPU seconds, the token count and a checksum of the ids so both sides can be
// shown equal.
//
//   tokenizer_throughput --model DIR --text FILE [--mode whole|lines] [--repeat 3]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <sstream>

#include "kiln/tokenizer.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace {

// sha256 over the ids as little-endian int32, the same bytes Python's array('i') gives.
std::string ids_checksum(const std::vector<std::int32_t>& ids) {
  return kiln::sha256_hex(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(ids.data()),
                                                        ids.size() * sizeof(std::int32_t)));
}

// CPU time of the process: one thread works, and other load on the machine counts less than in
// wall time (the comparison script measures HF the same way).
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln tokenizer encode throughput (one thread)"};
  std::string model, text_path, mode = "whole";
  int repeat = 3;
  app.add_option("--model", model, "Folder with tokenizer.json")->required();
  app.add_option("--text", text_path, "UTF-8 text file")->required();
  app.add_option("--mode", mode, "whole: one encode call; lines: one call per line")
      ->check(CLI::IsMember({"whole", "lines"}));
  app.add_option("--repeat", repeat, "Runs; the fastest is reported")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    const auto load_start = std::chrono::steady_clock::now();
    const kiln::Tokenizer tokenizer = kiln::Tokenizer::from_dir(model);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
    const std::string text = kiln::read_file(text_path);
    const auto lines = mode == "lines" ? split_lines(text) : std::vector<std::string>{text};
    double best_s = 1e300;
    std::vector<std::int32_t> ids;
    for (int run = 0; run < repeat; ++run) {
      ids.clear();
      const double start = cpu_seconds();
      for (const std::string& line : lines) {
        const auto line_ids = tokenizer.encode(line, false);
        ids.insert(ids.end(), line_ids.begin(), line_ids.end());
      }
      best_s = std::min(best_s, cpu_seconds() - start);
    }
    fmt::print(
        "{{\"bytes\": {}, \"seconds\": {:.6f}, \"mb_per_s\": {:.3f}, \"tokens\": {}, "
        "\"ids_sha256\": \"{}\", \"load_seconds\": {:.3f}}}\n",
        text.size(), best_s, static_cast<double>(text.size()) / best_s / 1e6, ids.size(), ids_checksum(ids), load_s);
  } catch (const kiln::Error& e) {
    fmt::print(stderr, "tokenizer_throughput: {}\n", e.what());
    return 1;
  }
  return 0;
}
