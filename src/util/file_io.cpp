#include "util/file_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>
#include <vector>

#include "util/error.hpp"
#include "util/log.hpp"

namespace kiln {
namespace {

std::string random_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(8, '0');
  for (char& c : s) c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return s;
}

// ".name<tag><8 random characters>": a hidden sibling name for work in progress.
std::string hidden_temporary_name(const std::filesystem::path& path, std::string_view tag) {
  std::string name(1, '.');
  name.append(path.filename().string()).append(tag).append(random_suffix());
  return name;
}

constexpr std::string_view kPartialTag = ".partial-";
constexpr std::string_view kLockSuffix = ".lock";

std::filesystem::path lock_path(const std::filesystem::path& staging) {
  return std::filesystem::path(staging.string() + std::string(kLockSuffix));
}

// Staging siblings of `final_path` whose writer has ended without finishing (their lock can be
// taken) are removed, saying so. One without a lock file (written before locks existed) may
// still be in use: it is named, not touched.
void remove_abandoned_staging(const std::filesystem::path& parent, const std::filesystem::path& final_path) {
  const std::string prefix = "." + final_path.filename().string() + std::string(kPartialTag);
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    if (entry.path().filename().string().starts_with(prefix)) found.push_back(entry.path());
  }
  if (!found.empty()) init_logging();
  for (const std::filesystem::path& path : found) {
    if (path.string().ends_with(kLockSuffix)) continue;
    const std::filesystem::path lock = lock_path(path);
    if (!std::filesystem::exists(lock)) {
      spdlog::warn("{}: an unfinished output of an earlier run; remove it if no run is writing it", path.string());
      continue;
    }
    if (ProcessLock::held(lock)) continue;
    std::filesystem::remove_all(path, ec);
    std::filesystem::remove(lock, ec);
    spdlog::warn("{}: removed, the unfinished output of a run that ended before finishing it", path.string());
  }
}

}  // namespace

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("{}: is a directory, not a file", path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fail(errno == ENOENT || errno == ENOTDIR ? ErrorKind::kNotFound : ErrorKind::kIo, "{}: cannot open: {}",
         path.string(), std::strerror(errno));
  }
  std::string contents;
  try {
    contents.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception& e) {  // libstdc++ reports some read errors by throwing
    fail(ErrorKind::kIo, "{}: read error: {}", path.string(), e.what());
  }
  if (in.bad()) fail(ErrorKind::kIo, "{}: read error: {}", path.string(), std::strerror(errno));
  return contents;
}

void write_file_atomic(const std::filesystem::path& path, std::string_view contents) {
  AtomicFileWriter writer(path);
  writer.write(contents);
  writer.commit();
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
  tmp_path_ = path_.parent_path() / hidden_temporary_name(path_, ".tmp-");
  out_.open(tmp_path_, std::ios::binary | std::ios::trunc);
  // The message names the file asked for: the temporary beside it is an implementation detail.
  if (!out_) fail(ErrorKind::kIo, "{}: cannot create: {}", path_.string(), std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed_) {
    out_.close();
    std::error_code ignored;
    std::filesystem::remove(tmp_path_, ignored);
  }
}

void AtomicFileWriter::write(std::string_view bytes) {
  out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out_) {
    fail(ErrorKind::kIo, "{}: write failed after {} bytes: {}", path_.string(), bytes_written_, std::strerror(errno));
  }
  bytes_written_ += bytes.size();
}

void AtomicFileWriter::commit() {
  out_.close();
  if (!out_) fail(ErrorKind::kIo, "{}: write failed while closing: {}", path_.string(), std::strerror(errno));
  std::error_code ec;
  std::filesystem::rename(tmp_path_, path_, ec);
  if (ec) fail(ErrorKind::kIo, "{}: cannot rename into place: {}", path_.string(), ec.message());
  committed_ = true;
}

StagingDirectory::StagingDirectory(std::filesystem::path final_path) : final_path_(std::move(final_path)) {
  if (std::filesystem::exists(final_path_)) {
    fail("{}: already exists; choose a new output directory or remove it first", final_path_.string());
  }
  std::filesystem::path parent = final_path_.parent_path();
  if (parent.empty()) parent = ".";
  if (std::filesystem::exists(parent) && !std::filesystem::is_directory(parent)) {
    fail("{}: the parent of {} is not a directory", parent.string(), final_path_.string());
  }
  if (!std::filesystem::is_directory(parent)) {
    fail(ErrorKind::kNotFound, "{}: parent directory does not exist", parent.string());
  }
  remove_abandoned_staging(parent, final_path_);
  staging_path_ = parent / hidden_temporary_name(final_path_, kPartialTag);
  lock_.emplace(lock_path(staging_path_));
  std::error_code ec;
  std::filesystem::create_directory(staging_path_, ec);
  if (ec) fail(ErrorKind::kIo, "{}: cannot create: {}", staging_path_.string(), ec.message());
}

StagingDirectory::~StagingDirectory() {
  if (!committed_) {
    std::error_code ignored;
    std::filesystem::remove_all(staging_path_, ignored);
  }
}

void StagingDirectory::commit() {
  std::error_code ec;
  std::filesystem::rename(staging_path_, final_path_, ec);
  if (ec) {
    fail(ErrorKind::kIo, "{}: cannot rename {} into place: {}", final_path_.string(), staging_path_.string(),
         ec.message());
  }
  committed_ = true;
  lock_.reset();
}

}  // namespace kiln
