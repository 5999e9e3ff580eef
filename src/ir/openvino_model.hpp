// An OpenVINO IR directory, as `optimum-cli export openvino` writes it (openvino_model.xml and
// .bin beside the Hugging Face config.json and tokenizer files), as a source of kiln weights.
// The architecture comes from config.json; the weights from the graph: each Linear's MatMul, the
// embedding's Gather, each norm's Multiply and each bias's Add is found by the module path
// optimum's converter names it with ("__module.model.layers.0.self_attn.q_proj/..."), and its
// weight read through the decompression subgraph (ir/openvino_weights). NNCF's layouts are
// kiln's: int4 / int8 codes, f16 scales and zero points are views into the mapped .bin, never
// re-quantised. What has no exact kiln form is refused, naming the layer.
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "ir/model_config.hpp"
#include "ir/openvino_graph.hpp"
#include "ir/openvino_weights.hpp"
#include "ir/tensor_source.hpp"
#include "util/json.hpp"
#include "util/mapped_file.hpp"

namespace kiln::ir {

class OpenVinoModel final : public TensorMap {
 public:
  // Reads config.json and the graph, maps the .bin and finds every weight. Errors name the file
  // and the layer at fault.
  explicit OpenVinoModel(const std::filesystem::path& dir);

  // True for a directory holding openvino_model.xml.
  static bool is_openvino_dir(const std::filesystem::path& dir);

  const ModelConfig& config() const { return config_; }
  const Json& generation_config() const { return generation_config_; }  // {} when absent

  std::string origin() const override { return dir_.string(); }
  // Codes and values always are; scales and zero points the .bin holds at an odd address or in
  // another type are copied.
  bool in_file_mapping(std::span<const std::uint8_t> bytes) const override;

 private:
  void add(const std::string& name, const OvWeight& weight);
  TensorView quantized_view(const std::string& name, const OvWeight& weight);
  std::span<const std::uint8_t> payload(const OvLayer& constant) const;
  std::int64_t norm_output_width(const OvLayer& multiply) const;
  void refuse_unclaimed_constants(const std::set<const OvLayer*>& claimed) const;
  std::span<const std::uint8_t> aligned(std::span<const std::uint8_t> bytes, std::size_t alignment);
  std::span<const std::uint8_t> own(std::vector<std::uint8_t> bytes);

  std::filesystem::path dir_;
  ModelConfig config_;
  Json generation_config_ = Json::object();
  MappedFile bin_;
  OvGraph graph_;
  std::map<std::string, const OvLayer*, std::less<>> codes_of_;  // name -> the Const it was read from
  std::deque<std::vector<std::uint8_t>> owned_;                  // copies, and values the .bin does not hold
};

}  // namespace kiln::ir
