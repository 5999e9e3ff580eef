// Structured output's costs on one thread, for a tokenizer: compiling each constraint (front end,
// lowering, and the vocabulary's trie for the first), and the allowed-token mask at every step
// of the token walks recorded in the mask goldens (tests/data/grammar/mask_goldens.json), cold
// (a fresh grammar: states met for the first time) and warm (the same walk again). Prints one
// JSON line per constraint; bench/compare/grammar_compare.py runs xgrammar on the same walks.
//
//   grammar_bench --tokenizer DIR --goldens FILE --name qwen3 [--repeat 5]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <set>

#include "grammar/grammar.hpp"
#include "grammar/grammar_cache.hpp"
#include "grammar/grammar_matcher.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

kiln::grammar::GrammarSource source_of_case(const kiln::Json& c) {
  return kiln::grammar::source_from_text(c.at("kind").get<std::string>(), c.at("source"));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Structured output: grammar compile time and per-step token-mask time"};
  std::string tokenizer_dir, goldens_path, name;
  int repeat = 5;
  app.add_option("--tokenizer", tokenizer_dir, "Folder with tokenizer.json")->required();
  app.add_option("--goldens", goldens_path, "mask_goldens.json")->required();
  app.add_option("--name", name, "Which tokenizer's walks to replay")->required();
  app.add_option("--repeat", repeat, "Compiles per constraint (the median is reported)");
  CLI11_PARSE(app, argc, argv);

  const auto start = Clock::now();
  const kiln::Tokenizer tokenizer = kiln::Tokenizer::from_dir(tokenizer_dir);
  const double tokenizer_ms = ms_since(start);
  const kiln::Json goldens = kiln::Json::parse(kiln::read_file(goldens_path));
  const auto entry = std::find_if(goldens.at("tokenizers").begin(), goldens.at("tokenizers").end(),
                                  [&](const kiln::Json& t) { return t.at("name") == name; });
  if (entry == goldens.at("tokenizers").end()) {
    fmt::print(stderr, "no walks for tokenizer '{}'\n", name);
    return 2;
  }
  const auto stops = entry->at("stop_token_ids").get<std::set<std::int32_t>>();
  const auto vocab = static_cast<std::size_t>(tokenizer.vocab_size());

  // The vocabulary (token bytes and trie) is built once per tokenizer: measured with the first.
  auto first = Clock::now();
  kiln::grammar::compile_cached(source_of_case(entry->at("cases").at(0)), tokenizer);
  const double first_compile_ms = ms_since(first);
  fmt::print("{{\"tokenizer_load_ms\": {:.1f}, \"first_compile_with_vocabulary_ms\": {:.1f}}}\n", tokenizer_ms,
             first_compile_ms);

  const auto vocabulary = std::make_shared<const kiln::grammar::GrammarVocabulary>(tokenizer);
  std::map<std::string, std::vector<const kiln::Json*>> walks;
  for (const kiln::Json& c : entry->at("cases")) walks[c.at("name")].push_back(&c);
  for (const auto& [case_name, cases] : walks) {
    const kiln::grammar::GrammarSource source = source_of_case(*cases.front());
    // A compile is the front end, the lowering and the automaton's first states, as
    // compile_cached does it for a vocabulary it has already.
    std::vector<double> compile_ms;
    std::shared_ptr<kiln::grammar::CompiledGrammar> compiled;
    for (int i = 0; i < repeat; ++i) {
      const auto t = Clock::now();
      // A fresh CompiledGrammar (not the cached one) so that the cold pass meets every state first.
      compiled = std::make_shared<kiln::grammar::CompiledGrammar>(
          kiln::grammar::lower(kiln::grammar::source_rules(source)), vocabulary);
      compile_ms.push_back(ms_since(t));
    }
    std::vector<std::uint32_t> words((vocab + 31) / 32);
    std::vector<double> cold_us, warm_us;
    for (std::vector<double>* times : {&cold_us, &warm_us}) {
      for (const kiln::Json* c : cases) {
        kiln::grammar::GrammarMatcher matcher(compiled, stops);
        for (const kiln::Json& step : c->at("steps")) {
          const auto t = Clock::now();
          matcher.fill_mask(words);
          times->push_back(ms_since(t) * 1000.0);
          matcher.accept(step.at("token").get<std::int32_t>());
        }
      }
    }
    fmt::print(
        "{{\"constraint\": \"{}\", \"compile_ms\": {:.3f}, \"steps\": {}, \"cold_mask_us_p50\": {:.1f}, "
        "\"cold_mask_us_p99\": {:.1f}, \"cold_mask_us_mean\": {:.1f}, \"warm_mask_us_p50\": {:.1f}, "
        "\"warm_mask_us_p99\": {:.1f}, \"states\": {}}}\n",
        case_name, percentile(compile_ms, 0.5), cold_us.size(), percentile(cold_us, 0.5), percentile(cold_us, 0.99),
        std::accumulate(cold_us.begin(), cold_us.end(), 0.0) / double(std::max<std::size_t>(cold_us.size(), 1)),
        percentile(warm_us, 0.5), percentile(warm_us, 0.99), compiled->num_states());
  }
  return 0;
}
