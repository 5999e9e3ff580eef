// Reader of kiln's IR directory (model.json + model.bin, docs/FORMAT.md): model.bin is
// memory-mapped and every tensor is a view into it. Opening validates everything a later stage
// relies on: the format version, the architecture, the tensor table against the file (order,
// alignment, overlaps, truncation, companions), zero padding, and by default each tensor's
// sha256, so a view handed out is always inside the file and holds what the writer wrote.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ir/ir_tensor_table.hpp"
#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"
#include "util/mapped_file.hpp"

namespace kiln::ir {

struct IrOpenOptions {
  // Hashes every tensor on open (about 1.5 GB/s with SHA-NI); off skips the cost for callers
  // that checked the directory already (kiln verify does both).
  bool verify_checksums = true;
};

class IrModel final : public TensorMap {
 public:
  explicit IrModel(const std::filesystem::path& dir, IrOpenOptions options = {});

  // True when `dir` holds a model.json (an IR rather than a Hugging Face checkpoint).
  static bool is_ir_dir(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  const ModelConfig& config() const { return config_; }
  const Json& generation_config() const { return generation_config_; }  // {} when absent
  const std::string& producer() const { return producer_; }
  const std::vector<IrTensorEntry>& entries() const { return entries_; }

  // Weights by Hugging Face name; a quantised weight's view carries its scales and zero points,
  // which are not listed by names() themselves.
  std::string origin() const override { return dir_.string(); }
  bool in_file_mapping(std::span<const std::uint8_t>) const override { return true; }  // every view

 private:
  void build_views(bool verify_checksums);

  std::filesystem::path dir_;
  ModelConfig config_;
  Json generation_config_ = Json::object();
  std::string producer_;
  std::vector<IrTensorEntry> entries_;
  MappedFile bin_;
};

}  // namespace kiln::ir
