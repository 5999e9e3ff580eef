// manifest.json of an exported IR: what produced it (command line, kiln version, sources,
// calibration data, choices, time) and the sha256 of every file written, so `kiln verify` can
// tell whether a directory still holds exactly what the export wrote.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace kiln::ir {

// {"<file>": {"sha256": ..., "bytes": ...}} for every regular file directly in `dir` except
// manifest.json, in name order. `known` supplies digests computed while writing (model.bin),
// so those files are not read again.
Json hash_directory_files(const std::filesystem::path& dir, const std::map<std::string, std::string>& known = {});

// Writes `body` plus "files" (hash_directory_files) as dir/manifest.json.
void write_manifest(const std::filesystem::path& dir, Json body, const std::map<std::string, std::string>& known = {});

struct VerifyReport {
  std::vector<std::string> problems;  // one line each, naming the file
  std::size_t files_checked = 0;
  bool ok() const { return problems.empty(); }
};

// Re-hashes every file the manifest lists (missing, changed and unlisted files are problems)
// and opens the IR with per-tensor checksums. Throws only when manifest.json itself is unusable.
VerifyReport verify_manifest(const std::filesystem::path& dir);

}  // namespace kiln::ir
