#include "ir/manifest.hpp"

#include <set>

#include "ir/ir_model.hpp"
#include "ir/ir_tensor_table.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/path_probe.hpp"
#include "util/sha256.hpp"

namespace kiln::ir {

namespace fs = std::filesystem;

Json hash_directory_files(const fs::path& dir, const std::map<std::string, std::string>& known) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name != kIrManifestJson) names.insert(name);
  }
  Json files = Json::object();
  for (const std::string& name : names) {
    auto it = known.find(name);
    const std::string digest = it != known.end() ? it->second : sha256_file(dir / name);
    files[name] = {{"sha256", digest}, {"bytes", fs::file_size(dir / name)}};
  }
  return files;
}

void write_manifest(const fs::path& dir, Json body, const std::map<std::string, std::string>& known) {
  body["files"] = hash_directory_files(dir, known);
  write_file_atomic(dir / kIrManifestJson, body.dump(1) + "\n");
}

VerifyReport verify_manifest(const fs::path& dir) {
  const fs::path path = dir / kIrManifestJson;
  if (!path_exists(path)) fail(ErrorKind::kNotFound, "{}: no {} to verify against", dir.string(), kIrManifestJson);
  const Json manifest = read_json_file(path);
  if (!manifest.is_object() || !manifest.contains("files") || !manifest["files"].is_object()) {
    fail("{}: field 'files' must be an object of file digests", path.string());
  }
  VerifyReport report;
  for (const auto& [name, entry] : manifest["files"].items()) {
    JsonFields f(entry, fmt::format("{}: files.{}", path.string(), name));
    const std::string expected = f.get<std::string>("sha256");
    if (name.find('/') != std::string::npos || !is_file_path(dir / name)) {
      report.problems.push_back(fmt::format("{}: missing", (dir / name).string()));
      continue;
    }
    ++report.files_checked;
    const std::string actual = sha256_file(dir / name);
    if (actual != expected) {
      report.problems.push_back(
          fmt::format("{}: sha256 {} differs from the manifest's {}", (dir / name).string(), actual, expected));
    }
  }
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != kIrManifestJson && !manifest["files"].contains(name)) {
      report.problems.push_back(fmt::format("{}: not listed in the manifest", entry.path().string()));
    }
  }
  try {
    IrModel model(dir, {.verify_checksums = true});
  } catch (const Error& e) {
    report.problems.push_back(e.what());
  }
  return report;
}

}  // namespace kiln::ir
