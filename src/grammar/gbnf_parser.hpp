// llama.cpp's GBNF grammar text -> RuleSet. Every rule a body references must be defined, and
// the rule every output must match is `root`; errors name the line and column (1-based, in code
// points) and what was expected there.
#pragma once

#include <cstdint>
#include <string_view>

#include "grammar/grammar_expr.hpp"

namespace kiln::grammar {

// The largest bound a `{m,n}` repetition may name. NOTE: the lowering unrolls bounded
// repetitions, so a bound is a size in grammar states; 10000 keeps one item's copies in the
// tens of thousands while covering every count real grammars use (lengths of ids, digits).
inline constexpr std::int64_t kGbnfMaxRepeat = 10000;

// Parses GBNF: `name ::= alternatives` rules (names [a-zA-Z0-9-]+), `#` comments, "string"
// literals and [character classes] with the escapes \n \t \r \\ \" \[ \] \xHH \uHHHH
// \UHHHHHHHH, `.` (any code point), `( )`, `|`, and the postfix `*` `+` `?` `{m}` `{m,}`
// `{m,n}` `{,n}`. A rule ends where the next `name ::=` begins, so bodies may span lines.
// Throws kiln::Error on malformed text, invalid UTF-8, an undefined or twice-defined rule, and
// a grammar without `root`.
RuleSet parse_gbnf(std::string_view text);

}  // namespace kiln::grammar
