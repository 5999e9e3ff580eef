// The byte-level grammar the matcher runs: rules of alternatives, each alternative a run of
// elements closed by kEnd. An element matches one byte from a 256-bit set or a whole rule.
// lower() builds it from a front end's RuleSet: code-point classes become UTF-8 byte
// sequences, alternations and repetitions become helper rules, and left recursion (which a
// top-down matcher cannot run) is refused naming the rule.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar_expr.hpp"

namespace kiln::grammar {

using ByteSet = std::array<std::uint64_t, 4>;

inline bool contains(const ByteSet& set, std::uint8_t byte) { return ((set[byte >> 6] >> (byte & 63)) & 1) != 0; }

struct Element {
  enum class Kind : std::uint8_t { kBytes, kRule, kEnd };
  Kind kind = Kind::kEnd;
  std::int32_t index = 0;  // kBytes: into byte_sets; kRule: the rule
};

struct Grammar {
  std::vector<Element> elements;                  // every alternative, back to back
  std::vector<std::vector<std::int32_t>> starts;  // rule → where each of its alternatives starts
  std::vector<std::string> rule_names;            // rule → name (helpers: "<rule>#<n>")
  std::vector<ByteSet> byte_sets;
  std::int32_t root = 0;
};

// Limits that keep a hostile grammar from exhausting memory while it is built: a rule (a
// name, its alternatives' tables) costs about as much as kRuleCost elements, and every element
// counts, the end of each alternative included.
inline constexpr std::size_t kRuleCost = 8;
inline constexpr std::size_t kMaxGrammarElements = 1 << 22;

// Throws kiln::Error naming the rule for an undefined reference, left recursion, or a grammar
// over kMaxGrammarElements.
Grammar lower(const RuleSet& rules);

// Whether the whole of `text` (bytes) is a sentence of the grammar.
bool matches(const Grammar& grammar, std::string_view text);

}  // namespace kiln::grammar
