// Lower bounds for numeric options, with errors that name the bound: CLI11's PositiveNumber and
// NonNegativeNumber print their range as "0.000000 to 1797693134862315708145…" (309 digits).
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::cli {

// The option's text must be a number no smaller than `minimum`
// ("--runs: must be at least 1, got 0").
CLI::Validator at_least(double minimum);

// Adds to every integer option of `app` and its subcommands (CLI11's INT / UINT) a check that the
// text fits a 64-bit integer: CLI11 2.3 turns "99999999999999999999" into the largest int64 in
// silence. Narrower integer options are range-checked by CLI11 itself. Call after every option
// exists.
void refuse_out_of_range_integers(CLI::App& app);

}  // namespace kiln::cli
