// `kiln synth`: a Hugging Face checkpoint with random weights of exactly a real model's shape
// (llama-3.2-1b, llama-3.1-8b, or any config.json), for benchmarks that need the size but not
// the knowledge. Weights are a pure function of (seed, tensor name, element index), written in
// pieces straight to safetensors shards, so an 8B checkpoint is never whole in memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "util/json.hpp"

namespace kiln::exporter {

// config.json of a named preset ("llama-3.2-1b", "llama-3.1-8b"); nullopt for other names.
std::optional<Json> synth_preset_config(std::string_view like);

struct SynthOptions {
  std::string like;  // a preset name or a config.json path
  std::filesystem::path out_dir;
  std::uint64_t seed = 0;
  std::optional<std::filesystem::path> tokenizer_dir;  // copy its tokenizer files; else generate one
  std::uint64_t max_shard_bytes = 5'000'000'000;       // Hugging Face's default shard size
  bool show_progress = true;
  const std::atomic<bool>* cancel = nullptr;
};

struct SynthResult {
  std::int64_t num_parameters = 0;
  std::uint64_t weight_bytes = 0;
  std::int64_t num_shards = 0;
  double seconds = 0;
};

SynthResult synthesize_checkpoint(const SynthOptions& options);

}  // namespace kiln::exporter
