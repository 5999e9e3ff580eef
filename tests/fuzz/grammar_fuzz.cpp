// libFuzzer target for structured output's compilers: the first byte picks the front end (JSON
// schema, regex, GBNF, structural tags), the rest is its source; for tags, its first line holds
// the triggers split by '|' and each further line a tag, its begin, schema and end split by tabs. Whatever compiles is
// lowered and its automaton is run over the source's own bytes (a walk that leaves and re-enters the grammar's states).
// A kiln::Error is the expected outcome for a bad source; a crash, a sanitizer report, any other exception or an
// allocation past -rss_limit_mb is a bug. Seeds: tests/data/grammar/fuzz_seeds. Run: grammar_fuzz
// -dict=tests/fuzz/grammar.dict CORPUS tests/data/grammar/fuzz_seeds
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.hpp"
#include "grammar/grammar_cache.hpp"
#include "grammar/stack_automaton.hpp"
#include "kiln/error.hpp"

namespace {

using kiln::grammar::GrammarSource;

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

GrammarSource tags_source(std::string_view text) {
  const std::vector<std::string> lines = split(text, '\n');
  GrammarSource source{.kind = GrammarSource::Kind::kTags, .triggers = split(lines[0], '|')};
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> fields = split(lines[i], '\t');
    fields.resize(3);
    source.tags.push_back({fields[0], fields[1], fields[2]});
  }
  return source;
}

GrammarSource source_of(std::uint8_t kind, std::string_view text) {
  using Kind = GrammarSource::Kind;
  static constexpr Kind kKinds[] = {Kind::kJsonSchema, Kind::kRegex, Kind::kGbnf};
  if (kind % 4 == 3) return tags_source(text);
  return {.kind = kKinds[kind % 4], .text = std::string(text)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const kiln::grammar::Grammar grammar = kiln::grammar::lower(kiln::grammar::source_rules(source_of(data[0], text)));
    kiln::grammar::StackAutomaton automaton(grammar);
    auto state = automaton.start();
    for (const char c : text) {
      const auto next = automaton.advance(state, static_cast<std::uint8_t>(c));
      state = next == kiln::grammar::StackAutomaton::kDead ? automaton.start() : next;
    }
    (void)automaton.accepts_end(state);
  } catch (const kiln::Error&) {}
  return 0;
}
