#include "ir/hf_checkpoint.hpp"

#include <set>

#include "util/error.hpp"
#include "util/path_probe.hpp"

namespace kiln::ir {

namespace fs = std::filesystem;

bool HfCheckpoint::is_checkpoint_dir(const fs::path& dir) { return is_file_path(dir / "config.json"); }

HfCheckpoint::HfCheckpoint(const fs::path& dir) : dir_(dir) {
  if (!is_directory_path(dir)) fail(ErrorKind::kNotFound, "{}: not a directory", dir.string());
  const fs::path config_path = dir / "config.json";
  if (!path_exists(config_path)) {
    fail(ErrorKind::kNotFound, "{}: no config.json: not a Hugging Face checkpoint directory", dir.string());
  }
  config_ = load_model_config(config_path);
  if (path_exists(dir / "generation_config.json")) {
    generation_config_ = read_json_file(dir / "generation_config.json");
    if (!generation_config_.is_object()) fail("{}: must be a JSON object", (dir / "generation_config.json").string());
  }

  const fs::path single = dir / "model.safetensors";
  const fs::path index = dir / "model.safetensors.index.json";
  if (path_exists(index)) {
    open_sharded(index);
  } else if (path_exists(single)) {
    shards_.push_back(std::make_unique<SafetensorsFile>(single));
    for (const auto& [name, view] : shards_.back()->tensors()) views_.emplace(name, view);
  } else if (path_exists(dir / "pytorch_model.bin")) {
    fail(ErrorKind::kUnsupported,
         "{}: has only pytorch_model.bin; kiln reads safetensors (re-save the model with "
         "save_pretrained(..., safe_serialization=True))",
         dir.string());
  } else {
    fail(ErrorKind::kNotFound, "{}: no model.safetensors or model.safetensors.index.json", dir.string());
  }
  split_fused(config_);
}

void HfCheckpoint::open_sharded(const fs::path& index_path) {
  const Json index = read_json_file(index_path);
  JsonFields f(index, index_path.string());
  if (!index.contains("weight_map") || !index["weight_map"].is_object()) {
    f.fail_field("weight_map", "must be an object mapping tensor names to shard files");
  }
  // Shard file → the tensors the index says it holds.
  std::map<std::string, std::set<std::string>> expected;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string()) f.fail_field("weight_map", fmt::format("entry '{}' must name a file", name));
    const std::string shard = file.get<std::string>();
    if (shard.find('/') != std::string::npos || shard.starts_with(".")) {
      f.fail_field("weight_map",
                   fmt::format("entry '{}' names '{}', which is not a file in this directory", name, shard));
    }
    expected[shard].insert(name);
  }
  for (const auto& [shard, names] : expected) {
    const fs::path shard_path = dir_ / shard;
    if (!path_exists(shard_path)) {
      fail(ErrorKind::kNotFound, "{}: shard '{}' listed in the weight_map is missing", index_path.string(), shard);
    }
    shards_.push_back(std::make_unique<SafetensorsFile>(shard_path));
    const auto& tensors = shards_.back()->tensors();
    for (const auto& name : names) {
      auto it = tensors.find(name);
      if (it == tensors.end()) {
        fail("{}: weight_map puts tensor '{}' in '{}', but that file does not hold it", index_path.string(), name,
             shard);
      }
      views_.emplace(name, it->second);
    }
    for (const auto& [name, view] : tensors) {
      if (!names.contains(name)) {
        fail("{}: holds tensor '{}', which the weight_map in {} does not list", shard_path.string(), name,
             index_path.filename().string());
      }
    }
  }
}

}  // namespace kiln::ir
