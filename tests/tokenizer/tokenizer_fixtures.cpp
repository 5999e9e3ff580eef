#include "tokenizer_fixtures.hpp"

#include <zlib.h>

#include <sstream>

#include "util/file_io.hpp"

namespace kiln::testing {

std::string read_maybe_gzipped(const std::filesystem::path& path) {
  if (path.extension() != ".gz") return read_file(path);
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw Error(ErrorKind::kIo, path.string() + ": cannot open");
  std::string out;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(file);
  if (failed) throw Error(ErrorKind::kIo, path.string() + ": corrupt gzip data");
  return out;
}

std::filesystem::path usable_tokenizer_dir(const std::filesystem::path& source, const TempDir& scratch) {
  if (std::filesystem::exists(source / "tokenizer.json")) return source;
  const auto dir = scratch.path() / source.filename();
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / "tokenizer.json", read_maybe_gzipped(source / "tokenizer.json.gz"));
  for (const char* name : {"tokenizer_config.json", "chat_template.jinja"}) {
    if (std::filesystem::exists(source / name)) std::filesystem::copy_file(source / name, dir / name);
  }
  return dir;
}

std::vector<Json> read_json_lines(const std::filesystem::path& path) {
  std::istringstream lines(read_maybe_gzipped(path));
  std::vector<Json> records;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) records.push_back(Json::parse(line));
  }
  return records;
}

std::optional<std::filesystem::path> tokenizer_fixture(const std::string& name) {
  const auto committed = test_data_dir() / "tokenizers" / name;
  if (std::filesystem::is_directory(committed)) return committed;
  if (const auto external = external_fixtures_dir()) {
    const auto dir = *external / "tokenizers" / name;
    if (std::filesystem::is_directory(dir)) return dir;
  }
  return std::nullopt;
}

}  // namespace kiln::testing
