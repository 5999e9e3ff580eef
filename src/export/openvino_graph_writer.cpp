#include "export/openvino_graph_writer.hpp"

#include <fmt/format.h>

#include <cstring>

#include "util/error.hpp"

namespace kiln::exporter {
namespace {

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      // An XML parser turns these into spaces inside an attribute (a chat template keeps them).
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default: out += c;
    }
  }
  return out;
}

// The port precision OpenVINO writes for an element type.
std::string precision(std::string_view element_type) {
  if (element_type == "boolean") return "BOOL";
  if (element_type == "f32") return "FP32";
  if (element_type == "f16") return "FP16";
  if (element_type == "bf16") return "BF16";
  std::string p(element_type);
  for (char& c : p) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return p;
}

std::string dims_text(const std::vector<std::int64_t>& dims, const char* indent) {
  std::string out;
  for (std::int64_t d : dims) out += fmt::format("{}<dim>{}</dim>\n", indent, d);
  return out;
}

std::string shape_attribute(const std::vector<std::int64_t>& dims) { return fmt::format("{}", fmt::join(dims, ", ")); }

}  // namespace

int OvGraphWriter::add_layer(std::string name, std::string type, std::string version, OvAttributes data,
                             std::vector<OvPort> inputs, std::vector<OvTensorType> outputs) {
  Layer layer;
  layer.name = std::move(name);
  layer.type = std::move(type);
  layer.version = std::move(version);
  layer.data = std::move(data);
  layer.inputs = std::move(inputs);
  layer.outputs = std::move(outputs);
  layer.id = static_cast<int>(layers_.size());
  if (layer.name.empty()) layer.name = fmt::format("{}_{}", layer.type, layer.id);
  for (const OvPort& in : layer.inputs) {
    const bool known = in.layer >= 0 && in.layer < layer.id;
    const auto& from = known ? layers_[static_cast<std::size_t>(in.layer)] : layer;
    const auto first = static_cast<int>(from.inputs.size());
    if (!known || in.port < first || in.port >= first + static_cast<int>(from.outputs.size())) {
      fail(ErrorKind::kInternal, "OpenVINO graph: layer '{}' takes an input from no earlier layer's output",
           layer.name);
    }
  }
  layer.output_names.resize(layer.outputs.size());
  layers_.push_back(std::move(layer));
  return layers_.back().id;
}

const OvTensorType& OvGraphWriter::type_of(OvPort port) const {
  const Layer& l = layers_.at(static_cast<std::size_t>(port.layer));
  return l.outputs.at(static_cast<std::size_t>(port.port) - l.inputs.size());
}

OvPort OvGraphWriter::parameter(const std::string& name, const OvTensorType& type) {
  std::vector<std::string> dims;
  for (std::int64_t d : type.dims) dims.push_back(d < 0 ? "?" : std::to_string(d));
  const int id =
      add_layer(name, "Parameter", "opset1",
                {{"shape", fmt::format("{}", fmt::join(dims, ","))}, {"element_type", type.element_type}}, {}, {type});
  layers_[id].output_names[0] = name;
  return {id, 0};
}

OvPort OvGraphWriter::constant(const std::string& name, const OvTensorType& type, std::span<const std::uint8_t> bytes) {
  bin_.resize((bin_.size() + 63) / 64 * 64, 0);
  const std::size_t offset = bin_.size();
  bin_.insert(bin_.end(), bytes.begin(), bytes.end());
  const int id = add_layer(name, "Const", "opset1",
                           {{"element_type", type.element_type},
                            {"shape", shape_attribute(type.dims)},
                            {"offset", std::to_string(offset)},
                            {"size", std::to_string(bytes.size())}},
                           {}, {type});
  return {id, 0};
}

OvPort OvGraphWriter::i64_constant(const std::vector<std::int64_t>& values, bool scalar) {
  const std::vector<std::int64_t> dims =
      scalar ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{static_cast<std::int64_t>(values.size())};
  return constant(
      "", {"i64", dims},
      std::span(reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * sizeof(std::int64_t)));
}

OvPort OvGraphWriter::i32_constant(std::int32_t value) {
  return constant("", {"i32", {}}, std::span(reinterpret_cast<const std::uint8_t*>(&value), sizeof(value)));
}

OvPort OvGraphWriter::i32_constant(const std::vector<std::int32_t>& values) {
  return constant(
      "", {"i32", {static_cast<std::int64_t>(values.size())}},
      std::span(reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * sizeof(std::int32_t)));
}

OvPort OvGraphWriter::u8_constant(std::string_view bytes) {
  return constant("", {"u8", {static_cast<std::int64_t>(bytes.size())}},
                  std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

OvPort OvGraphWriter::f32_constant(const std::vector<float>& values, const std::vector<std::int64_t>& dims) {
  return constant("", {"f32", dims},
                  std::span(reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * sizeof(float)));
}

OvPort OvGraphWriter::op(const std::string& type, const std::string& version, const std::string& name,
                         const OvAttributes& data, const std::vector<OvPort>& inputs, const OvTensorType& output) {
  const int id = add_layer(name, type, version, data, inputs, {output});
  return {id, static_cast<int>(inputs.size())};
}

std::vector<OvPort> OvGraphWriter::multi_op(const std::string& type, const std::string& version,
                                            const OvAttributes& data, const std::vector<OvPort>& inputs,
                                            const std::vector<OvTensorType>& outputs) {
  const int id = add_layer("", type, version, data, inputs, outputs);
  std::vector<OvPort> ports;
  for (std::size_t o = 0; o < outputs.size(); ++o) ports.push_back({id, static_cast<int>(inputs.size() + o)});
  return ports;
}

int OvGraphWriter::sink(const std::string& type, const std::string& version, const std::string& name,
                        const OvAttributes& data, const std::vector<OvPort>& inputs, const OvTensorType* output) {
  std::vector<OvTensorType> outputs;
  if (output != nullptr) outputs.push_back(*output);
  return add_layer(name, type, version, data, inputs, std::move(outputs));
}

void OvGraphWriter::name_output(OvPort port, const std::string& tensor_name) {
  Layer& l = layers_.at(static_cast<std::size_t>(port.layer));
  std::string& names = l.output_names.at(static_cast<std::size_t>(port.port) - l.inputs.size());
  names += (names.empty() ? "" : ",") + tensor_name;
}

std::string OvGraphWriter::xml() const {
  std::string out = "<?xml version=\"1.0\"?>\n<net name=\"Model0\" version=\"11\">\n\t<layers>\n";
  for (const Layer& l : layers_) {
    std::string result_names;
    if (l.type == "Result" && !l.inputs.empty()) {
      const OvPort in = l.inputs[0];
      const Layer& p = layers_[static_cast<std::size_t>(in.layer)];
      result_names = p.output_names[static_cast<std::size_t>(in.port) - p.inputs.size()];
    }
    out +=
        fmt::format("\t\t<layer id=\"{}\" name=\"{}\" type=\"{}\" version=\"{}\"{}>\n", l.id, escape(l.name), l.type,
                    l.version, result_names.empty() ? "" : fmt::format(" output_names=\"{}\"", escape(result_names)));
    if (!l.data.empty()) {
      out += "\t\t\t<data";
      for (const auto& [key, value] : l.data) out += fmt::format(" {}=\"{}\"", key, escape(value));
      out += " />\n";
    }
    if (!l.inputs.empty()) {
      out += "\t\t\t<input>\n";
      for (std::size_t i = 0; i < l.inputs.size(); ++i) {
        const OvTensorType& t = type_of(l.inputs[i]);
        out += fmt::format("\t\t\t\t<port id=\"{}\" precision=\"{}\"", i, precision(t.element_type));
        out += t.dims.empty() ? " />\n" : fmt::format(">\n{}\t\t\t\t</port>\n", dims_text(t.dims, "\t\t\t\t\t"));
      }
      out += "\t\t\t</input>\n";
    }
    if (!l.outputs.empty()) {
      out += "\t\t\t<output>\n";
      for (std::size_t o = 0; o < l.outputs.size(); ++o) {
        const OvTensorType& t = l.outputs[o];
        out += fmt::format("\t\t\t\t<port id=\"{}\" precision=\"{}\"", l.inputs.size() + o, precision(t.element_type));
        if (!l.output_names[o].empty()) out += fmt::format(" names=\"{}\"", escape(l.output_names[o]));
        out += t.dims.empty() ? " />\n" : fmt::format(">\n{}\t\t\t\t</port>\n", dims_text(t.dims, "\t\t\t\t\t"));
      }
      out += "\t\t\t</output>\n";
    }
    out += "\t\t</layer>\n";
  }
  out += "\t</layers>\n\t<edges>\n";
  for (const Layer& l : layers_) {
    for (std::size_t i = 0; i < l.inputs.size(); ++i) {
      out += fmt::format("\t\t<edge from-layer=\"{}\" from-port=\"{}\" to-layer=\"{}\" to-port=\"{}\" />\n",
                         l.inputs[i].layer, l.inputs[i].port, l.id, i);
    }
  }
  out += "\t</edges>\n";
  if (!rt_info_.empty()) {
    out += "\t<rt_info>\n";
    for (const auto& [key, value] : rt_info_) out += fmt::format("\t\t<{} value=\"{}\" />\n", key, escape(value));
    out += "\t</rt_info>\n";
  }
  out += "</net>\n";
  return out;
}

}  // namespace kiln::exporter
