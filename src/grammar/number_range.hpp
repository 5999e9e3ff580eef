// The decimal strings within bounds as a grammar expression: JSON Schema's minimum, maximum,
// exclusiveMinimum and exclusiveMaximum for integers and numbers. Bounds are compared exactly,
// on decimal digits (never through a double), and the language keeps the digit limits of the
// unbounded json-integer and json-number rules.
#pragma once

#include <optional>
#include <string>

#include "grammar/grammar_expr.hpp"

namespace kiln::grammar {

// JSON Schema's bounds, each a JSON number's decimal text as written or as a double's shortest
// form ("-3", "0.25", "1e+20"); where a side has two, the tighter holds.
struct NumberRange {
  std::optional<std::string> minimum;
  std::optional<std::string> exclusive_minimum;
  std::optional<std::string> maximum;
  std::optional<std::string> exclusive_maximum;
};

// The canonical JSON integers in `range` with at most `max_digits` (<= 16) digits ("-0" never),
// or nullopt when there is none. Bounds need not be integers: minimum 0.5 means n >= 1.
std::optional<ExprPtr> integer_in_range(const NumberRange& range, int max_digits);

// The decimals -?(0|[1-9][0-9]*)(\.[0-9]+)? in `range`, with at most `max_digits` (<= 16) digits
// in the integer part and in the fraction, or nullopt when there is none. NOTE: no exponent, so
// that the bound can be checked digit by digit, and no negative zero ("-0", "-0.0"). Trailing
// zeros are allowed and do not change the value: with exclusiveMaximum 1.5, "1.50" is out and
// "1.49" in.
std::optional<ExprPtr> decimal_in_range(const NumberRange& range, int max_digits);

}  // namespace kiln::grammar
