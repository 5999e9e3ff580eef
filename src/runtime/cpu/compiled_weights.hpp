// Every matrix of a model repacked for one ISA, in one blob: fresh anonymous memory (no
// CACHE_DIR) or a mapped compile-cache entry (built on a miss, mapped as is on a hit). Packing
// runs once per matrix, matrices in parallel; the source pages of a packed matrix are handed
// back right away, so resident memory stays near one copy of the weights.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "runtime/cpu/compile_cache.hpp"
#include "runtime/cpu/memory_region.hpp"
#include "runtime/cpu/weight_plan.hpp"

namespace kiln::runtime {

struct CompileReport {
  bool cache_enabled = false;
  CacheLookup lookup = CacheLookup::kMissing;  // what the cache held before this compile
  std::string reason;                          // why a stale or corrupt entry was rebuilt
  std::filesystem::path entry;                 // the cache file used or written
  double seconds = 0.0;
  std::size_t packed_bytes = 0;
};

class CompiledWeights {
 public:
  // Looks `plan` up in `cache_dir` (empty: no cache), packs on a miss. The source's pages that
  // lie in a file mapping are dropped as each matrix is packed.
  static std::unique_ptr<CompiledWeights> compile(WeightPlan plan, const ir::TensorSource& source,
                                                  const std::filesystem::path& cache_dir, ThreadPool& pool);

  // The packed matrix `name`, or nullptr when the plan has none of that name.
  std::optional<kernels::PackedWeights> find(std::string_view name) const;
  const WeightPlan& plan() const { return plan_; }
  const CompileReport& report() const { return report_; }

  // Only the cache lookup of compile(): the mapped entry on a hit, else nullptr (with `report`
  // saying what the cache held), so a caller can skip work a hit makes unnecessary.
  static std::unique_ptr<CompiledWeights> map_cached(WeightPlan plan, const ir::TensorSource& source,
                                                     const std::filesystem::path& cache_dir, ThreadPool& pool,
                                                     CompileReport* report);

 private:
  explicit CompiledWeights(WeightPlan plan) : plan_(std::move(plan)) {}
  void adopt(CompileCache::Found found);

  WeightPlan plan_;
  std::variant<AnonymousMemory, MappedFile> storage_;
  const std::uint8_t* payload_ = nullptr;
  CompileReport report_;
};

// Packs every planned matrix into `blob` (plan.total_bytes), matrices spread over the pool,
// dropping the pages behind each that `source` maps from a file (release_source_pages).
void pack_plan(const WeightPlan& plan, std::span<std::uint8_t> blob, ThreadPool& pool, const ir::TensorSource& source);

// Drops the pages of `tensor` (data, scales, zero points) that `source` maps from a file: they
// fault back in from the file if read again.
void release_source_pages(const ir::TensorSource& source, const ir::TensorView& tensor);

}  // namespace kiln::runtime
