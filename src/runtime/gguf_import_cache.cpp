#include "runtime/gguf_import_cache.hpp"

#include "ir/gguf_model.hpp"
#include "ir/ir_model.hpp"
#include "ir/source_to_ir.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/sha256.hpp"

namespace kiln::runtime {
namespace {

namespace fs = std::filesystem;

constexpr int kGgufImportVersion = 1;  // bump when the import's output changes

fs::path entry_dir(const fs::path& gguf, const fs::path& cache_dir, WeightScheme requantize) {
  std::error_code ec;
  const fs::path where = fs::weakly_canonical(gguf, ec);
  const auto size = fs::file_size(gguf, ec);
  const auto mtime = fs::last_write_time(gguf, ec).time_since_epoch().count();
  const std::string key =
      sha256_hex(fmt::format("kiln GGUF import v{}; {}; {} bytes; mtime {}; requantize {}", kGgufImportVersion,
                             where.string(), size, mtime, weight_scheme_name(requantize)));
  return cache_dir / fmt::format("{}-gguf", key.substr(0, 24));
}

}  // namespace

fs::path cached_gguf_import(const fs::path& gguf, const fs::path& cache_dir, WeightScheme requantize) {
  const fs::path dir = entry_dir(gguf, cache_dir, requantize);
  if (ir::IrModel::is_ir_dir(dir)) return dir;
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  const ir::GgufModel model(gguf, ir::GgufImportOptions{.requantize = requantize});
  StagingDirectory staging(dir);
  ir::write_ir(model, model.config(), staging.path(), "kiln GGUF import of " + gguf.filename().string());
  staging.commit();
  init_logging();
  spdlog::info("{}: imported into {}", gguf.string(), dir.string());
  return dir;
}

}  // namespace kiln::runtime
