#include "ir/openvino_model.hpp"

#include <cstring>
#include <set>

#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/half.hpp"
#include "util/path_probe.hpp"

namespace kiln::ir {
namespace {

namespace fs = std::filesystem;

// "__module.model.layers.0.self_attn.q_proj/aten::linear/MatMul" -> "model.layers.0.self_attn.q_proj":
// the PyTorch module optimum's converter names each layer after; empty for other names.
std::string module_path(std::string_view layer_name) {
  constexpr std::string_view kPrefix = "__module.";
  if (!layer_name.starts_with(kPrefix)) return {};
  layer_name.remove_prefix(kPrefix.size());
  return std::string(layer_name.substr(0, layer_name.find('/')));
}

std::string_view last_component(std::string_view module) {
  const std::size_t dot = module.rfind('.');
  return dot == std::string_view::npos ? module : module.substr(dot + 1);
}

bool is_linear_module(std::string_view module) {
  return last_component(module).ends_with("proj") || module == "lm_head";
}

std::uint64_t payload_bytes(std::string_view type, std::int64_t elements) {
  const auto n = static_cast<std::uint64_t>(elements);
  if (type == "u4" || type == "i4" || type == "nf4") return (n + 1) / 2;
  if (type == "u8" || type == "i8" || type == "boolean") return n;
  if (type == "f16" || type == "bf16" || type == "i16" || type == "u16") return 2 * n;
  if (type == "f32" || type == "i32" || type == "u32") return 4 * n;
  if (type == "f64" || type == "i64" || type == "u64") return 8 * n;
  return 0;  // an unknown type: its size is not checked here, and weights never use it
}

ElementType float_type(std::string_view type) {
  if (type == "f32") return ElementType::kF32;
  if (type == "f16") return ElementType::kF16;
  return ElementType::kBf16;
}

// Element i of a Const's payload as a number (the types a zero point, scale or axis may have).
double element(std::string_view type, std::span<const std::uint8_t> bytes, std::size_t i) {
  if (type == "u8") return bytes[i];
  if (type == "i8") return static_cast<std::int8_t>(bytes[i]);
  if (type == "u4") return read_nibble(bytes.data(), i);
  if (type == "i4") return static_cast<int>(read_nibble(bytes.data(), i) ^ 8u) - 8;
  if (type == "i32" || type == "i64") {
    std::int32_t v32 = 0;
    std::int64_t v64 = 0;
    if (type == "i32") std::memcpy(&v32, bytes.data() + 4 * i, 4);
    if (type == "i64") std::memcpy(&v64, bytes.data() + 8 * i, 8);
    return type == "i32" ? static_cast<double>(v32) : static_cast<double>(v64);
  }
  std::uint16_t h = 0;
  if (type == "f16" || type == "bf16") std::memcpy(&h, bytes.data() + 2 * i, 2);
  if (type == "f16") return f16_to_f32(h);
  if (type == "bf16") return bf16_to_f32(h);
  float f = 0;
  std::memcpy(&f, bytes.data() + 4 * i, 4);
  return f;
}

}  // namespace

// The static last dimension of a norm's x * rsqrt(...) product: the width of its gamma.
std::int64_t OpenVinoModel::norm_output_width(const OvLayer& multiply) const {
  if (multiply.output_dims.empty() || multiply.output_dims[0].empty() || multiply.output_dims[0].back() <= 0) {
    fail(ErrorKind::kUnsupported, "{}: a norm whose width is not static", graph_.describe(multiply));
  }
  return multiply.output_dims[0].back();
}

// What kiln does not compute must not be in the graph: an elementwise op applying a constant of
// more than one value to the activations (an AWQ scale NNCF could not fold into a weight, a norm
// named unlike optimum's) that is neither a gamma nor a bias kiln holds is refused. Scalars
// (epsilons, RoPE's -1), the rotary module's frequency arithmetic and layers whose output nothing
// reads are what graphs have that changes nothing.
void OpenVinoModel::refuse_unclaimed_constants(const std::set<const OvLayer*>& claimed) const {
  for (const OvLayer& layer : graph_.layers()) {
    if (layer.type != "Multiply" && layer.type != "Add" && layer.type != "Subtract" && layer.type != "Divide") continue;
    if (graph_.is_constant(layer) || !graph_.is_used(layer) || claimed.contains(&layer)) continue;
    if (last_component(module_path(layer.name)) == "rotary_emb") continue;
    for (std::size_t i = 0; i < graph_.num_inputs(layer); ++i) {
      const OvLayer& input = graph_.input(layer, i);
      if (!graph_.is_constant(input) || input.output_dims.empty()) continue;
      std::int64_t values = 1;
      for (std::int64_t d : input.output_dims[0]) values *= d;
      if (values > 1) {
        fail(ErrorKind::kUnsupported,
             "{}: applies a constant of {} values to the activations, which kiln's {} forward pass does not do (an "
             "AWQ scale not folded into a weight, or a graph optimum-cli did not write)",
             graph_.describe(layer), values, config_.architecture);
      }
    }
  }
}

bool OpenVinoModel::is_openvino_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "openvino_model.xml", ec);
}

OpenVinoModel::OpenVinoModel(const fs::path& dir)
    : dir_(dir), bin_(dir / "openvino_model.bin"), graph_(dir / "openvino_model.xml") {
  const fs::path config_path = dir / "config.json";
  if (!path_exists(config_path)) {
    fail(ErrorKind::kNotFound,
         "{}: no config.json; kiln reads an OpenVINO IR's architecture from the Hugging Face config that "
         "optimum-cli writes beside it",
         dir.string());
  }
  config_ = load_model_config(config_path);
  if (path_exists(dir / "generation_config.json")) {
    generation_config_ = read_json_file(dir / "generation_config.json");
    if (!generation_config_.is_object()) fail("{}: must be a JSON object", (dir / "generation_config.json").string());
  }

  std::map<std::string, const OvLayer*> norm_products;  // norm module -> its x * rsqrt(...) Multiply
  std::set<const OvLayer*> claimed;                     // layers whose constant input kiln holds
  for (const OvLayer& layer : graph_.layers()) {
    const std::string module = module_path(layer.name);
    if (layer.type == "MatMul" && graph_.is_constant(graph_.input(layer, 1))) {
      if (!is_linear_module(module)) {
        fail(ErrorKind::kUnsupported, "{}: multiplies by a constant that is not a Linear's weight kiln knows",
             graph_.describe(layer));
      }
      add(module + ".weight", trace_matmul_weight(graph_, layer));
      claimed.insert(&layer);
    } else if (layer.type == "Gather" && last_component(module) == "embed_tokens") {
      const OvLayer& axis = graph_.input(layer, 2);
      const std::string axis_type = axis.type == "Const" ? graph_.attribute(axis, "element_type") : "";
      if ((axis_type != "i32" && axis_type != "i64") || graph_.constant(axis).num_elements() != 1 ||
          element(axis_type, payload(axis), 0) != 0) {
        fail(ErrorKind::kUnsupported, "{}: an embedding that does not gather rows (axis 0)", graph_.describe(layer));
      }
      add(module + ".weight", trace_gather_weight(graph_, layer));
      claimed.insert(&layer);
    } else if ((layer.type == "Multiply" && last_component(module).ends_with("norm")) ||
               (layer.type == "Add" && is_linear_module(module))) {
      const bool first = graph_.is_constant(graph_.input(layer, 0));
      const bool second = graph_.is_constant(graph_.input(layer, 1));
      if (!first && !second && layer.type == "Multiply") norm_products.emplace(module, &layer);
      if (first == second) continue;  // not a constant applied to the activations
      const OvWeight vector = trace_vector(graph_, layer, first ? 0 : 1);
      if (vector.shape[0] == 1) continue;  // a norm's scalar (its epsilon), not its gamma
      add(module + (layer.type == "Add" ? ".bias" : ".weight"), vector);
      claimed.insert(&layer);
    }
  }
  refuse_unclaimed_constants(claimed);
  // OpenVINO's converter drops a multiplication by ones: a norm without its gamma Multiply has
  // a gamma of ones.
  for (const auto& [module, product] : norm_products) {
    const std::string name = module + ".weight";
    if (views_.contains(name)) continue;
    const std::int64_t width = norm_output_width(*product);
    std::vector<std::uint8_t> ones(static_cast<std::size_t>(width) * sizeof(float));
    for (std::size_t i = 0; i < ones.size(); i += sizeof(float)) {
      constexpr float kOne = 1.0f;
      std::memcpy(ones.data() + i, &kOne, sizeof(float));
    }
    views_.emplace(name, TensorView{name, ElementType::kF32, {width}, own(std::move(ones)), std::nullopt});
  }
  if (views_.empty()) {
    fail(ErrorKind::kUnsupported,
         "{}: no weight found by the module names optimum-cli gives layers ('__module.model.layers.0...'); "
         "kiln reads OpenVINO IRs exported by optimum-cli from Hugging Face models",
         graph_.path().string());
  }

  // A tied model's lm_head reads the embedding's Const; an untied graph wins over config.json.
  const auto lm_head = codes_of_.find("lm_head.weight");
  const auto embed = codes_of_.find("model.embed_tokens.weight");
  if (lm_head != codes_of_.end() && embed != codes_of_.end()) {
    if (lm_head->second == embed->second) {
      views_.erase("lm_head.weight");
      config_.tie_word_embeddings = true;
    } else {
      config_.tie_word_embeddings = false;
    }
  }
  split_fused(config_);
}

void OpenVinoModel::add(const std::string& name, const OvWeight& w) {
  if (const auto it = codes_of_.find(name); it != codes_of_.end()) {
    if (it->second == w.codes) return;  // the same weight used twice
    fail(ErrorKind::kUnsupported, "{}: a second weight for '{}' (the first is {})", graph_.describe(*w.codes), name,
         graph_.describe(*it->second));
  }
  codes_of_.emplace(name, w.codes);
  if (w.scale != nullptr) {
    views_.emplace(name, quantized_view(name, w));
    return;
  }
  const std::string& type = graph_.attribute(*w.codes, "element_type");
  const ElementType dtype = float_type(type);
  views_.emplace(name, TensorView{name, dtype, w.shape, payload(*w.codes), std::nullopt});
}

TensorView OpenVinoModel::quantized_view(const std::string& name, const OvWeight& w) {
  const std::string& codes_type = graph_.attribute(*w.codes, "element_type");
  const bool zp = w.zero_point != nullptr;
  WeightScheme scheme{};
  if (codes_type == "u8") {
    scheme = WeightScheme::kInt8Asym;
  } else if (codes_type == "u4") {
    scheme = WeightScheme::kInt4Asym;
  } else if (!zp && codes_type == "i8") {
    scheme = WeightScheme::kInt8Sym;
  } else if (!zp && codes_type == "i4") {
    scheme = WeightScheme::kInt4Sym;
  } else if (!zp && codes_type == "nf4") {
    scheme = WeightScheme::kNf4;
  } else {
    fail(ErrorKind::kUnsupported, "{}: {} codes with a zero point (kiln reads u8 / u4 codes with one)",
         graph_.describe(*w.codes), codes_type);
  }
  const auto out = static_cast<std::size_t>(w.shape[0]);
  const std::size_t groups = num_groups(static_cast<std::size_t>(w.shape[1]), static_cast<std::size_t>(w.group_size));

  TensorQuantization q;
  q.scheme = scheme;
  q.group_size = w.group_size;
  const std::string& scale_type = graph_.attribute(*w.scale, "element_type");
  if (scale_type == "f16") {
    q.scales = aligned(payload(*w.scale), 2);
  } else {  // f32 or bf16 scales are kept as f16 where that is exact
    const std::span<const std::uint8_t> stored = payload(*w.scale);
    std::vector<std::uint8_t> scales(out * groups * 2);
    for (std::size_t i = 0; i < out * groups; ++i) {
      const auto value = static_cast<float>(element(scale_type, stored, i));
      const std::uint16_t h = f32_to_f16(value);
      if (f16_to_f32(h) != value) {
        fail(ErrorKind::kUnsupported, "{}: scale {} of '{}' is not exact in f16, the precision kiln keeps scales in",
             graph_.describe(*w.scale), value, name);
      }
      std::memcpy(scales.data() + 2 * i, &h, 2);
    }
    q.scales = own(std::move(scales));
  }
  if (has_zero_points(scheme)) {
    const std::string zp_type = zp ? graph_.attribute(*w.zero_point, "element_type") : codes_type;
    const std::span<const std::uint8_t> stored = zp ? payload(*w.zero_point) : std::span<const std::uint8_t>();
    const std::size_t stored_count = zp ? static_cast<std::size_t>(graph_.constant(*w.zero_point).num_elements()) : 0;
    if (zp_type == codes_type && stored_count == out * groups) {
      q.zero_points = stored;
    } else {  // a broadcast zero point, another type, or none (0): one per row and group
      std::vector<std::uint8_t> points(code_bytes(scheme, out * groups));
      for (std::size_t i = 0; i < out * groups; ++i) {
        const double value = stored_count == 0 ? 0.0 : element(zp_type, stored, stored_count == 1 ? 0 : i);
        if (value != static_cast<int>(value) || value < min_code(scheme) || value > max_code(scheme)) {
          fail(ErrorKind::kUnsupported, "{}: zero point {} is not a code of {}", graph_.describe(*w.zero_point), value,
               weight_scheme_name(scheme));
        }
        if (is_4bit_scheme(scheme)) {
          write_nibble(points.data(), i, static_cast<unsigned>(value));
        } else {
          points[i] = static_cast<std::uint8_t>(value);
        }
      }
      q.zero_points = own(std::move(points));
    }
  }
  TensorView view{name, ElementType::kU8, w.shape, payload(*w.codes), q};
  validate_weight_view(weight_view(view), name);
  return view;
}

std::span<const std::uint8_t> OpenVinoModel::payload(const OvLayer& layer) const {
  const OvConstant c = graph_.constant(layer);
  const std::uint64_t expected = payload_bytes(c.element_type, c.num_elements());
  if (expected != 0 && c.size != expected) {
    fail("{}: size {} bytes, but {} elements of {} take {}", graph_.describe(layer), c.size, c.num_elements(),
         c.element_type, expected);
  }
  if (c.offset > bin_.size() || c.size > bin_.size() - c.offset) {
    fail("{}: bytes [{}, {}) lie past the end of {} ({} bytes): the file is truncated or not this graph's",
         graph_.describe(layer), c.offset, c.offset + c.size, bin_.path().string(), bin_.size());
  }
  return bin_.bytes().subspan(c.offset, c.size);
}

// Scales are read as f16 in place: ones at an odd address (the .bin packs Consts back to back)
// are copied. Float weights need no copy: their readers take any address, as safetensors' need.
std::span<const std::uint8_t> OpenVinoModel::aligned(std::span<const std::uint8_t> bytes, std::size_t alignment) {
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignment == 0) return bytes;
  return own({bytes.begin(), bytes.end()});
}

bool OpenVinoModel::in_file_mapping(std::span<const std::uint8_t> bytes) const {
  return bytes.data() >= bin_.data() && bytes.data() + bytes.size() <= bin_.data() + bin_.size();
}

std::span<const std::uint8_t> OpenVinoModel::own(std::vector<std::uint8_t> bytes) {
  return owned_.emplace_back(std::move(bytes));
}

}  // namespace kiln::ir
