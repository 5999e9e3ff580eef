// A Hugging Face checkpoint directory: config.json, optional generation_config.json, and
// weights in model.safetensors or shards listed by model.safetensors.index.json. Every shard is
// memory-mapped; tensors are views into the maps, never copied. Fused projections (Phi-3's
// qkv_proj, gate_up_proj) are offered under their split names only.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ir/model_config.hpp"
#include "ir/safetensors.hpp"
#include "ir/tensor_source.hpp"

namespace kiln::ir {

class HfCheckpoint final : public TensorMap {
 public:
  // Opens and validates the directory's files (not yet the tensor set against the
  // architecture: that is models::validate_tensors). Errors name the file and field.
  explicit HfCheckpoint(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  const ModelConfig& config() const { return config_; }
  const Json& generation_config() const { return generation_config_; }  // {} when absent

  std::string origin() const override { return dir_.string(); }
  bool in_file_mapping(std::span<const std::uint8_t>) const override { return true; }  // every view

  // True when `dir` looks like a Hugging Face checkpoint (has config.json).
  static bool is_checkpoint_dir(const std::filesystem::path& dir);

 private:
  void open_sharded(const std::filesystem::path& index_path);

  std::filesystem::path dir_;
  ModelConfig config_;
  Json generation_config_ = Json::object();
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
};

}  // namespace kiln::ir
