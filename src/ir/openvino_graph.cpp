#include "ir/openvino_graph.hpp"

#include <algorithm>
#include <charconv>
#include <deque>
#include <pugixml.hpp>

#include "util/error.hpp"

namespace kiln::ir {
namespace {

namespace fs = std::filesystem;

template <typename Int>
std::optional<Int> parse_int(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int required_int(const pugi::xml_node& node, const char* attribute, const std::string& where) {
  const pugi::xml_attribute a = node.attribute(attribute);
  const std::optional<int> value = a ? parse_int<int>(a.value()) : std::nullopt;
  if (!value) fail("{}: <{}> needs an integer '{}' attribute", where, node.name(), attribute);
  return *value;
}

}  // namespace

std::int64_t OvConstant::num_elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

OvGraph::OvGraph(const fs::path& xml) : path_(xml) {
  const std::string file = xml.string();
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_file(xml.c_str());
  if (parsed.status == pugi::status_file_not_found || parsed.status == pugi::status_io_error) {
    fail(ErrorKind::kIo, "{}: cannot read the file", file);
  }
  if (!parsed) fail("{}: not valid XML at byte {}: {}", file, parsed.offset, parsed.description());
  const pugi::xml_node net = doc.child("net");
  if (!net) fail("{}: no <net> element: not an OpenVINO IR", file);
  const int version = net.attribute("version").as_int(0);
  if (version != 10 && version != 11) {
    fail(ErrorKind::kUnsupported, "{}: IR version {} (kiln reads versions 10 and 11)", file, version);
  }

  for (const pugi::xml_node node : net.child("layers").children("layer")) {
    OvLayer layer;
    layer.id = required_int(node, "id", file);
    layer.name = node.attribute("name").value();
    layer.type = node.attribute("type").value();
    if (layer.type.empty()) fail("{}: layer {} has no type", file, layer.id);
    for (const pugi::xml_attribute a : node.child("data").attributes()) layer.data.emplace(a.name(), a.value());
    for (const pugi::xml_node port : node.child("input").children("port")) {
      layer.input_ports.push_back(required_int(port, "id", describe(layer)));
    }
    for (const pugi::xml_node port : node.child("output").children("port")) {
      std::vector<std::int64_t>& dims = layer.output_dims.emplace_back();
      for (const pugi::xml_node dim : port.children("dim")) {
        const std::optional<std::int64_t> d = parse_int<std::int64_t>(dim.text().get());
        if (!d) fail("{}: an output <dim> '{}' is not an integer", describe(layer), dim.text().get());
        dims.push_back(*d);
      }
    }
    if (!index_by_id_.emplace(layer.id, layers_.size()).second) fail("{}: two layers have id {}", file, layer.id);
    layers_.push_back(std::move(layer));
  }
  if (layers_.empty()) fail("{}: the graph has no layers", file);

  for (const pugi::xml_node edge : net.child("edges").children("edge")) {
    const int from = required_int(edge, "from-layer", file);
    const int to = required_int(edge, "to-layer", file);
    const int to_port = required_int(edge, "to-port", file);
    required_int(edge, "from-port", file);
    const auto source = index_by_id_.find(from);
    const auto target = index_by_id_.find(to);
    if (source == index_by_id_.end() || target == index_by_id_.end()) {
      fail("{}: an edge joins layer {} to layer {}, and there is no such layer", file, from, to);
    }
    const std::vector<int>& ports = layers_[target->second].input_ports;
    if (std::find(ports.begin(), ports.end(), to_port) == ports.end()) {
      fail("{}: an edge ends at input port {}, which the layer does not have", describe(layers_[target->second]),
           to_port);
    }
    if (!producer_.emplace(std::pair{to, to_port}, source->second).second) {
      fail("{}: input port {} has two edges", describe(layers_[target->second]), to_port);
    }
  }
  mark_constants();
}

// Kahn's order over the edges: a layer is constant once all its inputs are, and a layer that
// never comes up is on a cycle.
void OvGraph::mark_constants() {
  std::vector<std::size_t> pending(layers_.size());
  std::vector<std::vector<std::size_t>> consumers(layers_.size());
  for (const auto& [target, source] : producer_) consumers[source].push_back(index_by_id_.at(target.first));
  std::deque<std::size_t> ready;
  constant_.assign(layers_.size(), false);
  used_.assign(layers_.size(), false);
  for (std::size_t i = 0; i < layers_.size(); ++i) used_[i] = !consumers[i].empty();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const OvLayer& layer = layers_[i];
    for (int port : layer.input_ports) {
      if (!producer_.contains({layer.id, port})) fail("{}: input port {} is not connected", describe(layer), port);
    }
    pending[i] = layer.input_ports.size();
    constant_[i] = layer.type == "Const" || !layer.input_ports.empty();
    if (pending[i] == 0) ready.push_back(i);
  }
  std::size_t visited = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.front();
    ready.pop_front();
    ++visited;
    if (layers_[i].type == "Parameter" || layers_[i].type == "ReadValue") constant_[i] = false;
    for (std::size_t c : consumers[i]) {
      if (!constant_[i]) constant_[c] = false;
      if (--pending[c] == 0) ready.push_back(c);
    }
  }
  if (visited != layers_.size()) fail("{}: the graph has a cycle", path_.string());
}

const OvLayer& OvGraph::input(const OvLayer& layer, std::size_t index) const {
  if (index >= layer.input_ports.size()) {
    fail("{}: has {} inputs, input {} was expected", describe(layer), layer.input_ports.size(), index + 1);
  }
  return layers_[producer_.at({layer.id, layer.input_ports[index]})];
}

const std::string& OvGraph::attribute(const OvLayer& layer, std::string_view key) const {
  const auto it = layer.data.find(key);
  if (it == layer.data.end()) fail("{}: no '{}' attribute in <data>", describe(layer), key);
  return it->second;
}

OvConstant OvGraph::constant(const OvLayer& layer) const {
  if (layer.type != "Const") fail(ErrorKind::kInternal, "{} is not a Const", describe(layer));
  OvConstant c;
  c.element_type = attribute(layer, "element_type");
  const std::string& shape = attribute(layer, "shape");
  for (std::size_t start = 0; start < shape.size();) {
    const std::size_t comma = std::min(shape.find(',', start), shape.size());
    const std::optional<std::int64_t> d = parse_int<std::int64_t>(std::string_view(shape).substr(start, comma - start));
    if (!d || *d < 0) fail("{}: shape '{}' is not a list of sizes", describe(layer), shape);
    c.shape.push_back(*d);
    start = comma + 1;
  }
  const std::optional<std::uint64_t> offset = parse_int<std::uint64_t>(attribute(layer, "offset"));
  const std::optional<std::uint64_t> size = parse_int<std::uint64_t>(attribute(layer, "size"));
  if (!offset || !size) fail("{}: offset and size must be non-negative integers", describe(layer));
  c.offset = *offset;
  c.size = *size;
  return c;
}

std::string OvGraph::describe(const OvLayer& layer) const {
  return fmt::format("{}: layer '{}' ({}, id {})", path_.string(), layer.name, layer.type, layer.id);
}

}  // namespace kiln::ir
