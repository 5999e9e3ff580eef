// Each subcommand registers itself on the root CLI::App: it declares its flags and sets a
// callback that does the work. Subcommands stay thin: parse, call the library, print.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>

namespace kiln::cli {

// The model used when --model is not given: $KILN_MODEL, else the embedded default model.
std::filesystem::path default_model_dir();

}  // namespace kiln::cli
