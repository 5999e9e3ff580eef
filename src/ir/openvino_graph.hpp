// An OpenVINO IR's openvino_model.xml (IR version 10 or 11) read as a graph: its layers, their
// <data> attributes and output ports, and the edges between ports. Only the structure: what the
// layers compute is read elsewhere (ir/openvino_weights). Errors name the file and the layer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

struct OvLayer {
  int id = 0;
  std::string name;
  std::string type;  // "Const", "Convert", "MatMul", ...
  std::map<std::string, std::string, std::less<>> data;
  std::vector<int> input_ports;                        // port ids, in the order <input> lists them
  std::vector<std::vector<std::int64_t>> output_dims;  // per output port; -1 for a dynamic dimension
};

// A Const layer's payload: where its bytes are in openvino_model.bin and how to read them.
struct OvConstant {
  std::string element_type;  // OpenVINO's spelling: "f32", "f16", "u8", "i4", "nf4", ...
  std::vector<std::int64_t> shape;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;

  std::int64_t num_elements() const;
};

class OvGraph {
 public:
  // Parses the file. Bad XML, a missing attribute, an edge to an unknown layer or port, or a
  // cycle is an error naming the file and what is wrong.
  explicit OvGraph(const std::filesystem::path& xml);

  const std::filesystem::path& path() const { return path_; }
  const std::vector<OvLayer>& layers() const { return layers_; }

  // The layer feeding input `index` (in <input> order) of `layer`; an unconnected input fails.
  const OvLayer& input(const OvLayer& layer, std::size_t index) const;
  std::size_t num_inputs(const OvLayer& layer) const { return layer.input_ports.size(); }
  // True when the layer's value depends on no Parameter or state: a Const, or computed from them.
  bool is_constant(const OvLayer& layer) const { return constant_[index_of(layer)]; }
  // True when some layer reads an output of `layer` (a Result reads the graph's outputs).
  bool is_used(const OvLayer& layer) const { return used_[index_of(layer)]; }
  // The <data> attribute `key`; missing is an error naming the layer.
  const std::string& attribute(const OvLayer& layer, std::string_view key) const;
  OvConstant constant(const OvLayer& layer) const;  // a Const layer's payload description

  // "layer 'name' (Type, id 12) in <file>", for error messages.
  std::string describe(const OvLayer& layer) const;

 private:
  std::size_t index_of(const OvLayer& layer) const { return static_cast<std::size_t>(&layer - layers_.data()); }
  void mark_constants();

  std::filesystem::path path_;
  std::vector<OvLayer> layers_;
  std::map<int, std::size_t> index_by_id_;
  std::map<std::pair<int, int>, std::size_t> producer_;  // (layer id, input port) -> producer index
  std::vector<bool> constant_;
  std::vector<bool> used_;
};

}  // namespace kiln::ir
