#include "runtime/core.hpp"

#include <algorithm>

#include "ir/gguf_model.hpp"
#include "ir/hf_checkpoint.hpp"
#include "ir/ir_model.hpp"
#include "ir/openvino_model.hpp"
#include "models/model_factory.hpp"
#include "models/tensor_specs.hpp"
#include "runtime/cpu/cpu_ops.hpp"
#include "runtime/gguf_import_cache.hpp"
#include "runtime/gpu/gpu_ops.hpp"
#include "runtime/gpu/gpu_weight.hpp"
#include "runtime/reference/reference_ops.hpp"
#include "runtime/thread_pool.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace kiln::runtime {
namespace {

// The reference backend has no knobs: a property set away from its default would be ignored,
// so it is an error instead.
void check_reference_properties(const DeviceProperties& p) {
  const DeviceProperties defaults;
  for (const PropertySpec& spec : device_property_specs()) {
    if (spec.name == "KV_CACHE_PRECISION" && p.kv_cache_precision == ElementType::kF32) continue;
    if (spec.name == "GGUF_REQUANTIZE") continue;  // how weights are read, not how they are run
    if (spec.get(p) != spec.get(defaults)) {
      fail(
          "property {} does not apply to the {} device (it runs scalar f32 with an f32 KV cache); accepted there: "
          "KV_CACHE_PRECISION=f32, GGUF_REQUANTIZE",
          spec.name, kReferenceDevice);
    }
  }
}

// The GPU device runs its own kernels on its own memory: the CPU's knobs would be ignored there,
// so setting one is an error.
void check_gpu_properties(const DeviceProperties& p, std::string_view device) {
  const DeviceProperties defaults;
  for (const PropertySpec& spec : device_property_specs()) {
    if (spec.name == "KV_CACHE_PRECISION" || spec.name == "KV_CACHE_GROUP_SIZE" || spec.name == "CACHE_DIR" ||
        spec.name == "GGUF_REQUANTIZE") {
      continue;
    }
    if (spec.get(p) != spec.get(defaults)) {
      fail(
          "property {} does not apply to the {} device; accepted there: KV_CACHE_PRECISION (f32, f16, u8), "
          "KV_CACHE_GROUP_SIZE, CACHE_DIR, GGUF_REQUANTIZE",
          spec.name, device);
    }
  }
}

// More threads than this many per usable CPU is a mistake, never a tuning: refused before any
// thread starts (the system would run out of threads, or memory for their stacks, first).
constexpr std::size_t kMaxThreadsPerCpu = 8;

std::shared_ptr<ThreadPool> make_pool(const DeviceProperties& p) {
  if (const std::size_t usable = allowed_cpus().size(); p.inference_num_threads > kMaxThreadsPerCpu * usable) {
    fail(
        "INFERENCE_NUM_THREADS={} is far more than the {} CPUs this process may use (at most {}, {} a CPU; 0 uses "
        "each once)",
        p.inference_num_threads, usable, kMaxThreadsPerCpu * usable, kMaxThreadsPerCpu);
  } else if (p.inference_num_threads > usable) {
    spdlog::warn(
        "INFERENCE_NUM_THREADS={} is more than the {} CPUs this process may use: threads will share CPUs and "
        "wait on each other",
        p.inference_num_threads, usable);
  }
  ThreadPoolOptions o;
  o.num_threads = p.inference_num_threads;
  o.pin_threads = p.performance_hint == PerformanceHint::kLatency;
  o.spin_us = p.performance_hint == PerformanceHint::kLatency ? 200 : 20;
  return std::make_shared<ThreadPool>(o);
}

// The embedding table's rows may be dropped from memory after each lookup when they are pages of
// a file mapping.
bool embedding_in_file_mapping(const ir::TensorSource& weights) {
  const ir::TensorView* table = weights.find("model.embed_tokens.weight");
  return table != nullptr && weights.in_file_mapping(table->bytes);
}

struct OpenedWeights {
  std::shared_ptr<const ir::TensorSource> source;
  ir::ModelConfig config;
  Json generation_config;
  bool verified = false;
};

OpenedWeights open_weights(const std::filesystem::path& dir, bool verify, const DeviceProperties& p) {
  if (ir::GgufModel::is_gguf_file(dir)) {
    auto g = std::make_shared<ir::GgufModel>(dir, ir::GgufImportOptions{.requantize = p.gguf_requantize});
    return {g, g->config(), Json::object(), false};
  }
  if (ir::IrModel::is_ir_dir(dir)) {
    auto m = std::make_shared<ir::IrModel>(dir, ir::IrOpenOptions{.verify_checksums = verify});
    return {m, m->config(), m->generation_config(), verify};
  }
  if (ir::OpenVinoModel::is_openvino_dir(dir)) {  // optimum-cli also writes config.json: ahead of HF
    auto o = std::make_shared<ir::OpenVinoModel>(dir);
    return {o, o->config(), o->generation_config(), false};
  }
  auto c = std::make_shared<ir::HfCheckpoint>(dir);
  return {c, c->config(), c->generation_config(), false};
}

}  // namespace

models::KvCacheLayout kv_cache_layout(const ir::ModelConfig& config, const KvCacheRequest& r, ElementType precision,
                                      std::int64_t u8_group_size) {
  if (r.context_tokens <= 0 || r.max_sequences <= 0 || r.block_size <= 0) {
    fail("KV cache request: context_tokens, max_sequences and block_size must be positive (got {}, {}, {})",
         r.context_tokens, r.max_sequences, r.block_size);
  }
  models::KvCacheLayout kv;
  kv.block_size = r.block_size;
  kv.precision = precision;
  kv.u8_group_size = u8_group_size;
  kv.num_layers = config.num_layers;
  kv.num_kv_heads = config.num_kv_heads;
  kv.head_dim = config.head_dim;
  const std::uint64_t block_bytes = kv.bytes_per_token() * static_cast<std::uint64_t>(kv.block_size);
  const std::int64_t context = std::min(r.context_tokens, config.max_position_embeddings);
  const std::int64_t context_blocks = (context + kv.block_size - 1) / kv.block_size;
  if (r.num_blocks > 0) {
    kv.num_blocks = r.num_blocks;
  } else if (r.cache_bytes > 0) {
    kv.num_blocks = static_cast<std::int64_t>(r.cache_bytes / block_bytes);
    if (kv.num_blocks == 0) {
      fail("SchedulerConfig: cache_size of {} bytes holds no KV block: one block of {} tokens takes {} bytes at {}",
           r.cache_bytes, kv.block_size, block_bytes, kv_precision_name(precision));
    }
  } else {
    kv.num_blocks = r.max_sequences * context_blocks;
    if (r.memory_cap_bytes > 0) {
      const auto fits = static_cast<std::int64_t>(r.memory_cap_bytes / block_bytes);
      kv.num_blocks = std::max(std::min(kv.num_blocks, fits), context_blocks);
    }
  }
  return kv;
}

namespace {

CompiledModel build_cpu_model(const ir::ModelConfig& config, std::shared_ptr<const ir::TensorSource> weights,
                              const DeviceProperties& p, const KvCacheRequest& request, Isa isa,
                              std::shared_ptr<ThreadPool> pool, std::shared_ptr<const CompiledWeights> compiled) {
  CompiledModel out;
  out.config = config;
  out.weights = weights;
  out.info.device = std::string(kCpuDevice);
  out.info.isa = isa;
  out.info.num_threads = pool->num_threads();
  out.info.compile = compiled->report();
  auto ops =
      std::make_unique<CpuOps>(isa, p, std::move(compiled), std::move(pool), embedding_in_file_mapping(*weights));
  const CpuOps& cpu = *ops;
  out.model = models::create_language_model(
      config, weights, std::move(ops), kv_cache_layout(config, request, p.kv_cache_precision, p.kv_cache_group_size));
  out.info.kv_cache_bytes = cpu.kv_cache_bytes();
  init_logging();
  spdlog::info("compiled {} for CPU: isa {}, {} threads, {:.1f} MB packed ({}), KV {}", weights->origin(),
               isa_name(isa), out.info.num_threads, double(out.info.compile.packed_bytes) / 1e6,
               out.info.compile.cache_enabled ? cache_lookup_name(out.info.compile.lookup) : "no cache",
               kv_precision_name(p.kv_cache_precision));
  return out;
}

CompiledModel build_gpu_model(const ir::ModelConfig& config, std::shared_ptr<const ir::TensorSource> weights,
                              std::string_view device, const DeviceProperties& p, KvCacheRequest request) {
  check_gpu_properties(p, device);
  models::validate_tensors(config, *weights);
  auto gpu = std::make_shared<gpu::GpuContext>(gpu::select_gpu_device(device));
  const gpu::GpuDeviceInfo& info = gpu->info();
  // The weights and the KV cache share the device's memory: the cache gets at most what the
  // weights leave, and never less than one context.
  std::uint64_t weight_bytes = 0;
  for (const std::string& name : weights->names()) weight_bytes += gpu::uploaded_bytes(*weights->find(name));
  const std::uint64_t usable = gpu::usable_memory_bytes(info);
  const std::uint64_t kv_room = usable > weight_bytes ? usable - weight_bytes : 0;
  if (request.num_blocks == 0 && request.cache_bytes == 0)
    request.memory_cap_bytes = std::max<std::uint64_t>(kv_room, 1);
  const models::KvCacheLayout layout = kv_cache_layout(config, request, p.kv_cache_precision, p.kv_cache_group_size);
  const std::uint64_t block_bytes = layout.bytes_per_token() * static_cast<std::uint64_t>(layout.block_size);
  if (weight_bytes + block_bytes > usable) {
    fail(
        "the model does not fit {} ({}): its weights take {:.1f} MB of the {:.1f} MB the device can give (90% of "
        "{:.1f} MB), before any KV cache; use a smaller or more compressed model (`kiln budget` shows the arithmetic)",
        info.name, info.full_name, double(weight_bytes) / 1e6, double(usable) / 1e6,
        double(info.global_memory_bytes) / 1e6);
  }
  const std::uint64_t kv_bytes = block_bytes * static_cast<std::uint64_t>(layout.num_blocks);
  if (kv_bytes > kv_room) {
    fail(
        "the KV cache does not fit {}: {} blocks take {:.1f} MB, the weights leave {:.1f} MB of its {:.1f} MB; ask "
        "for a shorter context or fewer blocks",
        info.name, layout.num_blocks, double(kv_bytes) / 1e6, double(kv_room) / 1e6,
        double(info.global_memory_bytes) / 1e6);
  }

  CompiledModel out;
  out.config = config;
  out.weights = weights;
  out.info.device = info.name;
  auto ops = std::make_unique<gpu::GpuOps>(gpu, p.cache_dir);
  const gpu::GpuOps& ops_view = *ops;
  out.model = models::create_language_model(config, weights, std::move(ops), layout);
  out.info.kv_cache_bytes = ops_view.kv_cache_bytes();
  out.info.programs_compiled = ops_view.programs_compiled();
  out.info.programs_cached = ops_view.programs_cached();
  init_logging();
  spdlog::info(
      "compiled {} for {} ({}): {:.1f} MB of weights, KV {} ({:.1f} MB), {} programs compiled, {} from the "
      "cache",
      weights->origin(), info.name, info.full_name, double(ops_view.weight_bytes()) / 1e6,
      kv_precision_name(p.kv_cache_precision), double(out.info.kv_cache_bytes) / 1e6, out.info.programs_compiled,
      out.info.programs_cached);
  return out;
}

}  // namespace

CompiledModel Core::compile_model(const ir::ModelConfig& config, std::shared_ptr<const ir::TensorSource> weights,
                                  std::string_view device, const DeviceProperties& p,
                                  const KvCacheRequest& request) const {
  if (device == kReferenceDevice) {
    check_reference_properties(p);
    CompiledModel out;
    out.config = config;
    out.weights = weights;
    out.info.device = std::string(device);
    out.model = models::create_language_model(config, weights, std::make_unique<runtime::ReferenceOps>(),
                                              kv_cache_layout(config, request, ElementType::kF32, 32));
    return out;
  }
  if (gpu::is_gpu_device_name(device)) return build_gpu_model(config, std::move(weights), device, p, request);
  if (device != kCpuDevice) {
    fail("device '{}' is not available (accepted: {}, {}, {}.<n>, {})", device, kCpuDevice, gpu::kGpuDevice,
         gpu::kGpuDevice, kReferenceDevice);
  }
  const Isa isa = select_isa(p.isa);
  std::shared_ptr<ThreadPool> pool = make_pool(p);
  models::validate_tensors(config, *weights);  // before packing: its errors name every bad tensor
  std::shared_ptr<const CompiledWeights> compiled =
      CompiledWeights::compile(plan_weights(config, *weights, isa), *weights, p.cache_dir, *pool);
  return build_cpu_model(config, std::move(weights), p, request, isa, std::move(pool), std::move(compiled));
}

CompiledModel Core::read_and_compile(const std::filesystem::path& path, std::string_view device,
                                     const DeviceProperties& p, const KvCacheRequest& kv) const {
  // A GGUF file with a compile cache is read from its import, kept there as kiln's IR.
  const std::filesystem::path dir = device == kCpuDevice && !p.cache_dir.empty() && ir::GgufModel::is_gguf_file(path)
                                        ? cached_gguf_import(path, p.cache_dir, p.gguf_requantize)
                                        : path;
  // On a warm compile cache the packed weights come from the (hash-checked) entry, so an IR's
  // tensor checksums need not be recomputed; otherwise they are, before anything is packed.
  if (device == kCpuDevice && !p.cache_dir.empty() && ir::IrModel::is_ir_dir(dir)) {
    const OpenedWeights unverified = open_weights(dir, /*verify=*/false, p);
    models::validate_tensors(unverified.config, *unverified.source);
    const Isa isa = select_isa(p.isa);
    std::shared_ptr<ThreadPool> pool = make_pool(p);
    std::shared_ptr<const CompiledWeights> cached = CompiledWeights::map_cached(
        plan_weights(unverified.config, *unverified.source, isa), *unverified.source, p.cache_dir, *pool, nullptr);
    if (cached) {
      CompiledModel out =
          build_cpu_model(unverified.config, unverified.source, p, kv, isa, std::move(pool), std::move(cached));
      out.generation_config = unverified.generation_config;
      return out;
    }
  }
  const OpenedWeights opened = open_weights(dir, /*verify=*/true, p);
  CompiledModel out = compile_model(opened.config, opened.source, device, p, kv);
  out.generation_config = opened.generation_config;
  out.info.verified_checksums = opened.verified;
  return out;
}

}  // namespace kiln::runtime
