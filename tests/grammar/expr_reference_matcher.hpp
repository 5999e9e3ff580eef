// A test-only matcher straight over Expr trees: the set of input positions each node can reach,
// no lowering involved. Slow (sets of positions, repeats iterated to a fixpoint) but small
// enough to trust, so the regex goldens check the front end before the real matcher exists.
#pragma once

#include <string_view>

#include "grammar/grammar_expr.hpp"

namespace kiln::grammar::testing {

// True when the whole of `utf8` (valid UTF-8) matches `expr`. Rule references are not
// followed (regex expressions have none); one throws.
bool reference_matches(const ExprPtr& expr, std::string_view utf8);

}  // namespace kiln::grammar::testing
