// A writer of OpenVINO IR (version 11) graphs: layers with their <data> attributes and ports,
// the edges between them, and the Const payloads in the .bin, built op by op. It knows no
// model: export/openvino_ir_writer.hpp builds the decoder with it. Each output port carries the
// element type and dims the caller states (-1 for a dynamic dimension); OpenVINO re-infers
// shapes on read, kiln's reader (ir/openvino_graph.hpp) takes them as written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kiln::exporter {

// An output port of a layer.
struct OvPort {
  int layer = -1;
  int port = 0;
};

// OpenVINO's element type names: "f32", "f16", "bf16", "i64", "i32", "i8", "u8", "i4", "u4",
// "nf4", "boolean".
struct OvTensorType {
  std::string element_type;
  std::vector<std::int64_t> dims;
};

using OvAttributes = std::vector<std::pair<std::string, std::string>>;

class OvGraphWriter {
 public:
  // A Parameter with a tensor name equal to its layer name; dims -1 are dynamic.
  OvPort parameter(const std::string& name, const OvTensorType& type);
  // A Const whose payload is `bytes` (appended to the .bin, 64-byte aligned).
  OvPort constant(const std::string& name, const OvTensorType& type, std::span<const std::uint8_t> bytes);
  // Small Consts for shapes and scalars.
  OvPort i64_constant(const std::vector<std::int64_t>& values, bool scalar = false);
  OvPort i32_constant(std::int32_t value);
  OvPort f32_constant(const std::vector<float>& values, const std::vector<std::int64_t>& dims);
  // Any op with one output. `name` empty gives an anonymous "<type>_<id>".
  OvPort op(const std::string& type, const std::string& version, const std::string& name, const OvAttributes& data,
            const std::vector<OvPort>& inputs, const OvTensorType& output);
  // An op without outputs' consumers (Assign) or a Result; returns the layer id.
  int sink(const std::string& type, const std::string& version, const std::string& name, const OvAttributes& data,
           const std::vector<OvPort>& inputs, const OvTensorType* output);
  // Adds a tensor name to an output port (the logits, the Parameters).
  void name_output(OvPort port, const std::string& tensor_name);

  const OvTensorType& type_of(OvPort port) const;

  // The XML text and the .bin bytes.
  std::string xml() const;
  const std::vector<std::uint8_t>& bin() const { return bin_; }

 private:
  struct Layer {
    int id = 0;
    std::string name, type, version;
    OvAttributes data;
    std::vector<OvPort> inputs;
    std::vector<OvTensorType> outputs;
    std::vector<std::string> output_names;  // per output, comma-separated tensor names
  };
  int add_layer(std::string name, std::string type, std::string version, OvAttributes data, std::vector<OvPort> inputs,
                std::vector<OvTensorType> outputs);

  std::vector<Layer> layers_;
  std::vector<std::uint8_t> bin_;
};

}  // namespace kiln::exporter
