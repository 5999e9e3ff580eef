// Lower bounds for numeric options, with errors that name the bound: CLI11's PositiveNumber and
// NonNegativeNumber print their range as "0.000000 to 1797693134862315708145…" (309 digits).
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::cli {

// The option's text must be a number no smaller than `minimum`
// ("--runs: must be at least 1, got 0").
CLI::Validator at_least(double minimum);

}  // namespace kiln::cli
