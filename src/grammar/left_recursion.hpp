// Left recursion in a lowered grammar, found in time linear in its size: a hostile grammar may
// have hundreds of thousands of helper rules, so neither the nullable rules nor the cycles may
// cost a pass (or a search) per rule.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "grammar/grammar.hpp"

namespace kiln::grammar {

// rule → its alternatives, each a run of kBytes / kRule elements (no kEnd).
using RuleAlternatives = std::vector<std::vector<std::vector<Element>>>;

// The rules that can match the empty string.
std::vector<bool> nullable_rules(const RuleAlternatives& rules);

struct LeftRecursion {
  std::int32_t rule;     // reaches itself without consuming a byte ...
  std::int32_t through;  // ... by this call, which is not last in its alternative
};

// A call that must return (one not last in its alternative) from which the caller can be
// reached again before a byte is matched would make a top-down matcher push frames forever. A
// cycle of tail calls only keeps the stack as it is, and is allowed. nullopt when there is none.
std::optional<LeftRecursion> find_left_recursion(const RuleAlternatives& rules);

}  // namespace kiln::grammar
