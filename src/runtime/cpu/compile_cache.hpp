// The compile cache (CACHE_DIR): one file per (model directory, ISA) holding every repacked
// matrix, so a later load maps it instead of repacking. The file records the key it was built
// for (model content, ISA, packed-layout and blob versions) and a hash of every payload byte; a
// lookup re-checks both and the whole matrix table, so an entry for another model or kiln
// version (stale) or with damaged bytes (corrupt) is reported and rebuilt, never used.
//
// File: "KILNCPU1" | u64 header_bytes | u64 hash64(header) | header JSON | zeros to 4096 | payload
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "ir/tensor_source.hpp"
#include "runtime/cpu/weight_plan.hpp"
#include "util/mapped_file.hpp"

namespace kiln {
class ThreadPool;
}

namespace kiln::runtime {

// Bump when the file format or anything packed into it (beyond kPackedLayoutVersion) changes.
inline constexpr int kCompiledBlobVersion = 2;  // 2: payload hashed with stripe_hash64 chunks

// What the model's bytes are, cheaply: an IR's per-tensor SHA-256 from model.json, or for other
// sources a hash64 of the planned matrices' bytes (whose file pages are dropped once hashed).
std::string model_fingerprint(const ir::TensorSource& source, const WeightPlan& plan);

// SHA-256 (hex) over the fingerprint, the ISA, the layout and blob versions and the plan.
std::string compile_cache_key(const WeightPlan& plan, std::string_view model_fingerprint);

enum class CacheLookup : std::uint8_t { kHit, kMissing, kStale, kCorrupt };

std::string_view cache_lookup_name(CacheLookup lookup);  // "hit", "missing", "stale", "corrupt"

class CompileCache {
 public:
  // Creates `dir` if needed (an error names it when that fails).
  explicit CompileCache(std::filesystem::path dir);

  // The entry file for a model directory (`origin`) compiled for `isa`.
  std::filesystem::path entry_path(std::string_view origin, Isa isa) const;

  struct Found {
    CacheLookup lookup = CacheLookup::kMissing;
    std::string reason;              // why it is stale or corrupt
    std::optional<MappedFile> file;  // set on a hit
    std::size_t payload_offset = 0;
  };
  // Checks the entry at `path` against `key` and `plan`; hashes the payload on `pool`.
  Found open(const std::filesystem::path& path, const std::string& key, const WeightPlan& plan, ThreadPool& pool) const;

  // Writes a fresh entry atomically (temporary file + rename): `fill` writes the payload
  // (plan.total_bytes) in place, in the file's shared mapping.
  void write(const std::filesystem::path& path, const std::string& key, const WeightPlan& plan, ThreadPool& pool,
             const std::function<void(std::span<std::uint8_t>)>& fill) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kiln::runtime
