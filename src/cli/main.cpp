// Entry point of the kiln binary: builds the subcommand tree and turns library errors into a
// message on stderr and an exit code (1 bad input, options included; 3 internal error).
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/git_commit.hpp"
#include "cli/option_checks.hpp"
#include "cli/standard_streams.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace kiln::cli {

// $KILN_MODEL, else the embedded model: installed beside the binary (<prefix>/bin/kiln and
// <prefix>/share/kiln/models/kiln-tiny), else in the source tree the binary was built from.
std::filesystem::path default_model_dir() {
  if (const char* env = std::getenv("KILN_MODEL"); env != nullptr && *env != '\0') return env;
  std::error_code error;
  const auto binary = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = binary.parent_path().parent_path() / KILN_INSTALLED_MODEL_DIR;
    if (std::filesystem::exists(installed / "config.json", error)) return installed;
  }
  return KILN_DEFAULT_MODEL_DIR;
}

}  // namespace kiln::cli

int main(int argc, char** argv) {
  kiln::cli::reserve_standard_streams();
  kiln::init_logging();
  CLI::App app{"kiln: LLM inference in one binary: export, run, chat, serve, bench, eval"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION + " (" + KILN_GIT_COMMIT + ")");
  app.require_subcommand(1);
  // Subcommands (see commands.hpp):
  kiln::cli::register_run_command(app);
  kiln::cli::register_chat_command(app);
  kiln::cli::register_serve_command(app);
  kiln::cli::register_inspect_command(app);
  kiln::cli::register_tokenize_command(app);
  kiln::cli::register_detokenize_command(app);
  kiln::cli::register_template_command(app);
  kiln::cli::register_export_command(app, argc, argv);
  kiln::cli::register_verify_command(app);
  kiln::cli::register_synth_command(app);
  kiln::cli::register_eval_command(app);
  kiln::cli::register_budget_command(app);
  kiln::cli::register_bench_command(app);
  kiln::cli::register_devices_command(app);
  kiln::cli::refuse_out_of_range_integers(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version succeed; a bad option is bad input like any other (exit 1, not
    // CLI11's own 100-odd codes).
    return app.exit(e) == 0 ? 0 : 1;
  } catch (const kiln::Error& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return e.kind() == kiln::ErrorKind::kInternal ? 3 : 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the system refused (too long, no permission): the user's files, not a bug in kiln.
    std::cerr << "kiln: error: " << e.path1().string() << ": " << e.code().message() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "kiln: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
