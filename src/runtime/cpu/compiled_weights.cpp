#include "runtime/cpu/compiled_weights.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/thread_pool.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/mapped_file.hpp"

namespace kiln::runtime {
namespace {

std::size_t float_element_bytes(WeightScheme scheme) { return scheme == WeightScheme::kF32 ? 4 : 2; }

void pack_one(const PlannedMatrix& m, std::span<std::uint8_t> blob, const ir::TensorSource& source) {
  WeightView view = m.canonical;
  // Safetensors float data need not be aligned to its element size; the packer reads it typed.
  std::vector<std::uint8_t> aligned;
  if (is_float_scheme(view.scheme) &&
      reinterpret_cast<std::uintptr_t>(view.data) % float_element_bytes(view.scheme) != 0) {
    aligned.resize(m.tensor->bytes.size() + 8);
    const std::size_t shift = (8 - reinterpret_cast<std::uintptr_t>(aligned.data()) % 8) % 8;
    std::memcpy(aligned.data() + shift, view.data, m.tensor->bytes.size());
    view.data = aligned.data() + shift;
  }
  kernels::pack_weights_into(view, m.layout, blob.subspan(m.offset, m.layout.total_bytes), m.name);
  release_source_pages(source, *m.tensor);
}

}  // namespace

void pack_plan(const WeightPlan& plan, std::span<std::uint8_t> blob, ThreadPool& pool, const ir::TensorSource& source) {
  KILN_DASSERT(blob.size() >= plan.total_bytes);
  // Largest first, so the last matrices to finish are small ones and both threads end together.
  std::vector<std::size_t> order(plan.matrices.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return plan.matrices[a].layout.total_bytes > plan.matrices[b].layout.total_bytes;
  });
  pool.parallel_for(order.size(),
                    [&](std::size_t task, std::size_t) { pack_one(plan.matrices[order[task]], blob, source); });
}

void release_source_pages(const ir::TensorSource& source, const ir::TensorView& tensor) {
  const auto release = [&](std::span<const std::uint8_t> bytes) {
    if (!bytes.empty() && source.in_file_mapping(bytes)) release_file_pages(bytes);
  };
  release(tensor.bytes);
  if (tensor.quantization) {
    release(tensor.quantization->scales);
    release(tensor.quantization->zero_points);
  }
}

void CompiledWeights::adopt(CompileCache::Found found) {
  payload_ = found.file->data() + found.payload_offset;
  storage_ = std::move(*found.file);
}

std::unique_ptr<CompiledWeights> CompiledWeights::map_cached(WeightPlan plan, const ir::TensorSource& source,
                                                             const std::filesystem::path& cache_dir, ThreadPool& pool,
                                                             CompileReport* report) {
  Stopwatch clock;
  std::unique_ptr<CompiledWeights> w(new CompiledWeights(std::move(plan)));
  CompileReport& r = w->report_;
  r.cache_enabled = true;
  r.packed_bytes = w->plan_.total_bytes;
  const CompileCache cache(cache_dir);
  r.entry = cache.entry_path(source.origin(), w->plan_.isa);
  CompileCache::Found found =
      cache.open(r.entry, compile_cache_key(w->plan_, model_fingerprint(source, w->plan_)), w->plan_, pool);
  r.lookup = found.lookup;
  r.reason = found.reason;
  r.seconds = clock.elapsed_ms() / 1e3;
  if (report) *report = r;
  if (found.lookup != CacheLookup::kHit) return nullptr;
  w->adopt(std::move(found));
  return w;
}

std::unique_ptr<CompiledWeights> CompiledWeights::compile(WeightPlan plan, const ir::TensorSource& source,
                                                          const std::filesystem::path& cache_dir, ThreadPool& pool) {
  Stopwatch clock;
  std::unique_ptr<CompiledWeights> w(new CompiledWeights(std::move(plan)));
  CompileReport& r = w->report_;
  r.packed_bytes = w->plan_.total_bytes;
  const auto pack_in_memory = [&] {
    AnonymousMemory& memory = w->storage_.emplace<AnonymousMemory>(w->plan_.total_bytes, /*huge_pages=*/true);
    pack_plan(w->plan_, {memory.data(), memory.size()}, pool, source);
    w->payload_ = memory.data();
    r.seconds = clock.elapsed_ms() / 1e3;
    return std::move(w);
  };
  if (cache_dir.empty()) return pack_in_memory();
  r.cache_enabled = true;
  const CompileCache cache(cache_dir);
  r.entry = cache.entry_path(source.origin(), w->plan_.isa);
  const std::string key = compile_cache_key(w->plan_, model_fingerprint(source, w->plan_));
  CompileCache::Found found = cache.open(r.entry, key, w->plan_, pool);
  r.lookup = found.lookup;
  r.reason = found.reason;
  if (found.lookup != CacheLookup::kHit) {
    init_logging();
    if (found.lookup == CacheLookup::kMissing) {
      spdlog::info("compile cache: no entry {}; compiling", r.entry.string());
    } else {
      spdlog::warn("compile cache: entry {} is {} ({}); rebuilding it", r.entry.string(),
                   cache_lookup_name(found.lookup), found.reason);
    }
    try {
      cache.write(r.entry, key, w->plan_, pool,
                  [&](std::span<std::uint8_t> payload) { pack_plan(w->plan_, payload, pool, source); });
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo) throw;
      // A cache that cannot be written (a full disk, a read-only folder) costs the next load its
      // compile, not this load.
      spdlog::warn("compile cache: {}; compiling without the cache", e.what());
      r.cache_enabled = false;
      return pack_in_memory();
    }
    found = cache.open(r.entry, key, w->plan_, pool);
    if (found.lookup != CacheLookup::kHit) {
      fail(ErrorKind::kIo, "{}: the compile-cache entry just written does not read back ({})", r.entry.string(),
           found.reason);
    }
  }
  w->adopt(std::move(found));
  r.seconds = clock.elapsed_ms() / 1e3;
  return w;
}

std::optional<kernels::PackedWeights> CompiledWeights::find(std::string_view name) const {
  const PlannedMatrix* m = plan_.find(name);
  if (m == nullptr) return std::nullopt;
  return kernels::PackedWeights{m->layout, payload_ + m->offset};
}

}  // namespace kiln::runtime
