// Each subcommand lives in its own file (`<name>_command.cpp`) and registers itself on the root
// CLI::App: it declares its flags and sets a callback that does the work. Subcommands stay thin:
// parse, call the library, print. main.cpp calls every register_* function below.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>

namespace kiln::cli {

// The model used when --model is not given: $KILN_MODEL, else the embedded default model.
std::filesystem::path default_model_dir();

// One line per subcommand, in the order `kiln --help` lists them.
void register_run_command(CLI::App& app);
void register_chat_command(CLI::App& app);
void register_inspect_command(CLI::App& app);
void register_tokenize_command(CLI::App& app);
void register_detokenize_command(CLI::App& app);
void register_template_command(CLI::App& app);
// export records its exact command line in the manifest, so it sees argv.
void register_export_command(CLI::App& app, int argc, char** argv);
void register_verify_command(CLI::App& app);
void register_synth_command(CLI::App& app);
void register_eval_command(CLI::App& app);
void register_budget_command(CLI::App& app);
void register_bench_command(CLI::App& app);
void register_devices_command(CLI::App& app);
void register_serve_command(CLI::App& app);

}  // namespace kiln::cli
