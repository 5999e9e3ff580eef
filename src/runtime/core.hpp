// The runtime's entry point, named as OpenVINO names it: Core lists the devices and compiles a
// model for one of them with typed properties. "CPU" is the compiled backend (weights repacked
// for the detected or forced ISA, optionally through the compile cache, a persistent thread pool,
// vector kernels); "REFERENCE" is the scalar f32 oracle. Either way the result is a
// models::LanguageModel, so everything above runs on both.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"
#include "models/language_model.hpp"
#include "runtime/cpu/compiled_weights.hpp"
#include "runtime/device_info.hpp"
#include "runtime/properties.hpp"
#include "util/json.hpp"

namespace kiln::runtime {

// How big a KV cache to allocate: max_sequences sequences of context_tokens each (the context
// is capped by the model's max_position_embeddings), within memory_cap_bytes.
struct KvCacheRequest {
  std::int64_t context_tokens = 4096;
  std::int64_t max_sequences = 1;
  std::int64_t num_blocks = 0;    // > 0: exactly this many blocks, whatever the others say
  std::uint64_t cache_bytes = 0;  // > 0 (and num_blocks 0): as many blocks as fit in this many bytes
  std::int64_t block_size = 16;
  // > 0: a size derived from max_sequences stays within this many bytes, but holds at least one
  // whole context (a cap from the free memory; an explicit num_blocks or cache_bytes is obeyed).
  std::uint64_t memory_cap_bytes = 0;
};

// What a compile did, for `kiln bench`, logs and tests.
struct CompiledModelInfo {
  std::string device;
  Isa isa = Isa::kScalar;
  std::size_t num_threads = 1;
  CompileReport compile;              // CPU only
  std::size_t kv_cache_bytes = 0;     // CPU only: the KV pool's mapping (resident only where used)
  bool verified_checksums = false;    // an IR's per-tensor SHA-256 was checked on open
  std::size_t programs_compiled = 0;  // GPU only: OpenCL programs compiled from source,
  std::size_t programs_cached = 0;    // and loaded from CACHE_DIR instead
};

struct CompiledModel {
  ir::ModelConfig config;
  Json generation_config = Json::object();  // generation_config.json; {} when absent
  std::shared_ptr<const ir::TensorSource> weights;
  std::unique_ptr<models::LanguageModel> model;
  CompiledModelInfo info;
};

class Core {
 public:
  std::vector<std::string> available_devices() const { return device_names(); }
  DeviceInfo get_device_info(std::string_view device) const { return describe_device(device); }

  // Opens `dir` (kiln IR or Hugging Face checkpoint directory, or a GGUF file) and compiles it
  // for `device` (a GGUF with a CACHE_DIR through its import kept there as IR). An IR's
  // tensor checksums are verified on open unless a valid compile-cache entry already holds the
  // packed weights (the entry's own hash covers every byte that will be read from it).
  CompiledModel read_and_compile(const std::filesystem::path& path, std::string_view device,
                                 const DeviceProperties& properties, const KvCacheRequest& kv) const;

  // Compiles already opened weights (tests, in-memory sources).
  CompiledModel compile_model(const ir::ModelConfig& config, std::shared_ptr<const ir::TensorSource> weights,
                              std::string_view device, const DeviceProperties& properties,
                              const KvCacheRequest& kv) const;
};

// The KV layout a request gives for this model (model-dependent fields are filled by the model).
models::KvCacheLayout kv_cache_layout(const ir::ModelConfig& config, const KvCacheRequest& request,
                                      ElementType precision, std::int64_t u8_group_size);

}  // namespace kiln::runtime
