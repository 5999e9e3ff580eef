// The regex subset of structured-output constraints (an OpenAI / vLLM `regex`, a JSON-schema
// `pattern`) -> grammar expressions. The whole output must match (Python's re.fullmatch), so
// `^` and `$` add nothing and are accepted only where they say exactly that; constructs a
// context-free grammar cannot express (backreferences, lookaround, \b) are refused by name.
#pragma once

#include <cstdint>
#include <string_view>

#include "grammar/grammar_expr.hpp"

namespace kiln::grammar {

// The largest bound a `{m,n}` quantifier may name (as kGbnfMaxRepeat, and for the same reason:
// the lowering unrolls bounded repetitions).
inline constexpr std::int64_t kRegexMaxRepeat = 10000;

// Parses Python `re` syntax with the ASCII flag's classes: literals, `.` (any code point but
// \n), [classes] and [^classes], \d \D \w \W \s \S, the escapes \. \\ \n \t \r \f \v \a \0 \xHH
// \uHHHH \UHHHHHHHH and escaped metacharacters, ( ) (?: ) (?P<name> ) (?<name> ) and (?#...)
// comments, `|`, the quantifiers * + ? {m} {m,} {m,n} {,n} and their lazy forms (the same
// language), `^` / \A at the start and `$` / \Z at the end of a top-level alternative.
// Throws kiln::Error naming the position (0-based, in code points as Python counts) and the
// construct for everything else: backreferences, lookaround, \b \B, anchors elsewhere, inline
// flags, possessive quantifiers and atomic groups, conditionals, \p{...} properties, unbalanced
// parentheses.
// The result references no rules, so it can be embedded in any rule set.
ExprPtr regex_to_expr(std::string_view pattern);

// The same as a rule set of one rule, `root`.
RuleSet regex_to_rules(std::string_view pattern);

}  // namespace kiln::grammar
