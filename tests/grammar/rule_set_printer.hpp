// Tests' view of a RuleSet as canonical GBNF-like text, so a parse result is checked against one
// readable string. Every node shows: a nested sequence or alternation gets parentheses.
#pragma once

#include <string>

#include "grammar/grammar_expr.hpp"

namespace kiln::testing {

// "..." literals (\" \\ \n \t \r, other control characters as \xHH, the rest as UTF-8), classes
// with escaped ] \ - ^ and \xHH / \uHHHH / \UHHHHHHHH for non-printable code points, `.` for any
// code point, postfix ? * + {m} {m,} {m,n}.
std::string print_expr(const grammar::ExprPtr& expr);

// One "name ::= body" line per rule, in order.
std::string print_rules(const grammar::RuleSet& rules);

}  // namespace kiln::testing
