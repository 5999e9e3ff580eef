// Opens a model (kiln's IR, a Hugging Face checkpoint or a GGUF file) for generation: weights
// (mapped), tokenizer, the forward pass over a backend with its KV cache, and the model's
// generation defaults. Everything that runs a model (kiln run, eval, bench, the pipeline) loads
// through here.
#pragma once

#include <filesystem>
#include <memory>

#include "ir/tensor_source.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/tokenizer.hpp"
#include "models/language_model.hpp"
#include "runtime/core.hpp"

namespace kiln::genai {

struct LoadOptions {
  std::int64_t context_tokens = 4096;     // KV cache capacity for one sequence; capped by the model
  std::int64_t max_sequences = 1;         // sequences the KV cache holds at full context
  std::int64_t num_blocks = 0;            // > 0: the KV cache's size in blocks, instead
  std::uint64_t cache_bytes = 0;          // > 0 (num_blocks 0): the KV cache's size in bytes, instead
  std::int64_t block_size = 16;           // tokens per KV block
  std::uint64_t kv_memory_cap_bytes = 0;  // > 0: max_sequences shrinks to fit (not below one context)
  // "CPU" (the compiled backend), "GPU" / "GPU.<n>" (OpenCL) or "REFERENCE" (the scalar oracle),
  // with its properties.
  std::string device = "CPU";
  runtime::DeviceProperties properties{};
};

struct LoadedModel {
  std::shared_ptr<const ir::TensorSource> weights;
  std::unique_ptr<models::LanguageModel> model;
  Tokenizer tokenizer;
  GenerationConfig generation_defaults;
  runtime::CompiledModelInfo info{};  // device, ISA, threads, compile-cache outcome
};

// `path` is a model directory (kiln IR or Hugging Face checkpoint) or a GGUF file. Throws
// kiln::Error naming the path and the problem.
LoadedModel load_model(const std::filesystem::path& path, const LoadOptions& options = {});

// The tokenizer of a model: the directory's tokenizer.json (+ tokenizer_config.json), or the one
// a GGUF file's metadata describes.
Tokenizer model_tokenizer(const std::filesystem::path& path);

}  // namespace kiln::genai
