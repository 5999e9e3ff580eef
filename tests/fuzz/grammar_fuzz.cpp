// libFuzzer target for structured output's compilers: the first byte picks the front end (JSON
// schema, regex, GBNF), the rest is its source. Whatever compiles is lowered and its automaton
// is run over the source's own bytes (a walk that leaves and re-enters the grammar's states). A
// kiln::Error is the expected outcome for a bad source; a crash, a sanitizer report, any other
// exception or an allocation past -rss_limit_mb is a bug. Seeds: tests/data/grammar/fuzz_seeds.
// Run: grammar_fuzz -dict=tests/fuzz/grammar.dict CORPUS tests/data/grammar/fuzz_seeds
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "grammar/grammar.hpp"
#include "grammar/grammar_cache.hpp"
#include "grammar/stack_automaton.hpp"
#include "kiln/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  using Kind = kiln::grammar::GrammarSource::Kind;
  static constexpr Kind kKinds[] = {Kind::kJsonSchema, Kind::kRegex, Kind::kGbnf};
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const kiln::grammar::Grammar grammar =
        kiln::grammar::lower(kiln::grammar::source_rules({kKinds[data[0] % 3], std::string(text), {}}));
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
