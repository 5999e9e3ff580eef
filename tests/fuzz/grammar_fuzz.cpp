// libFuzzer target for the grammar front ends: the first byte picks GBNF (even) or regex (odd),
// the rest is the grammar text. A kiln::Error is the expected outcome for bad text; a crash, a
// sanitizer report or any other exception is a bug. Run: grammar_fuzz -dict=tests/fuzz/grammar.dict
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "grammar/gbnf_parser.hpp"
#include "grammar/regex_parser.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] % 2 == 0) {
      kiln::grammar::parse_gbnf(text);
    } else {
      kiln::grammar::regex_to_rules(text);
    }
  } catch (const kiln::Error&) {}
  return 0;
}
