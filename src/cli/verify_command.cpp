// `kiln verify DIR`: re-hashes every file of an exported IR against manifest.json and opens the
// IR with its per-tensor checksums; prints each mismatch and exits 1 if there is any.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "ir/manifest.hpp"
#include "util/error.hpp"

namespace kiln::cli {

void register_verify_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("verify", "Check an exported model directory against its manifest");
  cmd->add_option("model", *dir, "IR directory written by kiln export")->required();
  cmd->callback([dir] {
    const ir::VerifyReport report = ir::verify_manifest(*dir);
    for (const std::string& problem : report.problems) fmt::print("MISMATCH {}\n", problem);
    if (!report.ok()) fail("{}: {} problem(s) found", *dir, report.problems.size());
    fmt::print("{}: OK ({} files match the manifest, every tensor checksum matches)\n", *dir, report.files_checked);
  });
}

}  // namespace kiln::cli
