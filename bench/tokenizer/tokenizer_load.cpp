// Construction time of kiln::Tokenizer::from_dir (read, parse, vocabulary and merge tables,
// regex compilation), one thread: the part of a warm-cache pipeline load the tokenizer owns.
// Prints the median, min and max wall milliseconds of --repeat loads, and the CPU milliseconds.
//
//   tokenizer_load --model DIR [--repeat 9]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "kiln/tokenizer.hpp"
#include "util/error.hpp"

namespace {

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln tokenizer construction time"};
  std::string model;
  int repeat = 9;
  app.add_option("--model", model, "Folder with tokenizer.json")->required();
  app.add_option("--repeat", repeat, "Number of loads")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<double> wall_ms, cpu_times_ms;
    std::int32_t vocab = 0;
    for (int i = 0; i < repeat; ++i) {
      const double cpu_start = cpu_ms();
      const auto start = std::chrono::steady_clock::now();
      const kiln::Tokenizer tokenizer = kiln::Tokenizer::from_dir(model);
      wall_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      cpu_times_ms.push_back(cpu_ms() - cpu_start);
      vocab = tokenizer.vocab_size();
    }
    std::sort(wall_ms.begin(), wall_ms.end());
    std::sort(cpu_times_ms.begin(), cpu_times_ms.end());
    const auto mid = static_cast<std::size_t>(repeat / 2);
    fmt::print(
        "{{\"vocab_size\": {}, \"loads\": {}, \"wall_ms_median\": {:.1f}, \"wall_ms_min\": {:.1f}, "
        "\"wall_ms_max\": {:.1f}, \"cpu_ms_median\": {:.1f}}}\n",
        vocab, repeat, wall_ms[mid], wall_ms.front(), wall_ms.back(), cpu_times_ms[mid]);
  } catch (const kiln::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
