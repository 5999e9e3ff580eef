// Where a model's tensors come from: a Hugging Face checkpoint, kiln's IR, a GGUF file or an
// OpenVINO IR. Model code asks for tensors by their Hugging Face name and never learns which
// file holds them.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/tensor_view.hpp"

namespace kiln::ir {

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // nullptr when absent. The view stays valid as long as the source lives.
  virtual const TensorView* find(std::string_view name) const = 0;
  virtual std::vector<std::string> names() const = 0;
  // For error messages: the directory or file the tensors come from.
  virtual std::string origin() const = 0;
  // True when `bytes` (a view's data, scales or zero points) lie in a read-only file mapping the
  // source holds, so that a consumer done with them (the weight packer, the embedding lookup)
  // may drop those pages from memory (release_file_pages); never for bytes the source owns.
  virtual bool in_file_mapping(std::span<const std::uint8_t> bytes) const { return false; }
};

struct ModelConfig;

// A TensorSource that holds its views in a map by name, filled as it loads.
class TensorMap : public TensorSource {
 public:
  const TensorView* find(std::string_view name) const final;
  std::vector<std::string> names() const final;

 protected:
  // Phi-3's fused qkv_proj / gate_up_proj replaced by their parts (ir/fused_projections); a
  // source holding a part and its fused tensor both is an error naming origin().
  void split_fused(const ModelConfig& config);

  std::map<std::string, TensorView, std::less<>> views_;
};

}  // namespace kiln::ir
