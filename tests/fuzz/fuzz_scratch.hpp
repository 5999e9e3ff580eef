// A per-process scratch directory for fuzz targets whose loaders read files: in memory-backed
// storage (/dev/shm) where there is one, removed when the process exits normally (libFuzzer ends
// -runs and -max_total_time through exit()), so finished runs leave nothing behind. A crash
// leaves it in place, beside the crash input, on purpose.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace kiln::fuzz {

// "<shm or temp>/kiln-<target>-fuzz-<pid>", created by the first call (its `target` names it).
inline const std::filesystem::path& scratch_dir(std::string_view target) {
  namespace fs = std::filesystem;
  // NOTE: never destroyed, so the atexit handler below cannot outlive it (a static registered
  // after the handler would be destroyed before it runs).
  static const fs::path* const dir = [&] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    auto* d = new fs::path(base / ("kiln-" + std::string(target) + "-fuzz-" + std::to_string(getpid())));
    fs::create_directories(*d);
    return d;
  }();
  static const bool registered = std::atexit([] {
                                   std::error_code ignored;
                                   std::filesystem::remove_all(*dir, ignored);
                                 }) == 0;
  (void)registered;
  return *dir;
}

}  // namespace kiln::fuzz
