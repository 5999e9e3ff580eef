// A writer of OpenVINO IR (version 11) graphs: layers with their <data> attributes and ports,
// the edges between them, the Const payloads in the .bin and the model's rt_info, built op by op.
// It knows no model: export/openvino_ir_writer.hpp builds the decoder with it,
// export/openvino_tokenizer_writer.hpp the tokenizer and detokenizer. Each output port carries the
// element type and dims the caller states (-1 for a dynamic dimension); OpenVINO re-infers
// shapes on read, kiln's reader (ir/openvino_graph.hpp) takes them as written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::exporter {

// An output port of a layer.
struct OvPort {
  int layer = -1;
  int port = 0;
};

// OpenVINO's element type names: "f32", "f16", "bf16", "i64", "i32", "i8", "u8", "i4", "u4",
// "nf4", "boolean", "string".
struct OvTensorType {
  std::string element_type;
  std::vector<std::int64_t> dims;
};

// A dimension known only when the model runs (OpenVINO writes it as -1).
inline constexpr std::int64_t kDyn = -1;

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
  OvPort i32_constant(const std::vector<std::int32_t>& values);  // [values.size()]
  OvPort u8_constant(std::string_view bytes);                    // [bytes.size()]
  OvPort f32_constant(const std::vector<float>& values, const std::vector<std::int64_t>& dims);
  // Any op with one output. `name` empty gives an anonymous "<type>_<id>".
  OvPort op(const std::string& type, const std::string& version, const std::string& name, const OvAttributes& data,
            const std::vector<OvPort>& inputs, const OvTensorType& output);
  // An op with several outputs, their ports in order.
  std::vector<OvPort> multi_op(const std::string& type, const std::string& version, const OvAttributes& data,
                               const std::vector<OvPort>& inputs, const std::vector<OvTensorType>& outputs);
  // An op without outputs' consumers (Assign) or a Result; returns the layer id.
  int sink(const std::string& type, const std::string& version, const std::string& name, const OvAttributes& data,
           const std::vector<OvPort>& inputs, const OvTensorType* output);
  // Adds a tensor name to an output port (the logits, the Parameters).
  void name_output(OvPort port, const std::string& tensor_name);

  const OvTensorType& type_of(OvPort port) const;

  // The model's rt_info entries (<rt_info><key value="..." /></rt_info>), in the order given.
  void set_rt_info(OvAttributes entries) { rt_info_ = std::move(entries); }

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
  OvAttributes rt_info_;
};

}  // namespace kiln::exporter
