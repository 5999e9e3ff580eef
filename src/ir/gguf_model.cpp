#include "ir/gguf_model.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <fstream>

#include "ir/gguf_config.hpp"
#include "ir/gguf_dequantize.hpp"
#include "ir/gguf_weight_import.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/mapped_file.hpp"

namespace kiln::ir {
namespace {

namespace fs = std::filesystem;

// llama.cpp's tensor names (gguf-py's TensorNameMap) and the Hugging Face names they came from.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kModelTensors = {{
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
}};
constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kLayerTensors = {{
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_k.bias", "self_attn.k_proj.bias"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_v.bias", "self_attn.v_proj.bias"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"attn_q_norm.weight", "self_attn.q_norm.weight"},
    {"attn_k_norm.weight", "self_attn.k_norm.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
}};

}  // namespace

std::string hf_tensor_name(std::string_view name) {
  for (const auto& [gguf, hf] : kModelTensors) {
    if (name == gguf) return std::string(hf);
  }
  if (!name.starts_with("blk.")) return {};
  const std::string_view rest = name.substr(4);
  const std::size_t dot = rest.find('.');
  std::int64_t layer = -1;
  if (dot == std::string_view::npos ||
      std::from_chars(rest.data(), rest.data() + dot, layer).ptr != rest.data() + dot || layer < 0) {
    return {};
  }
  for (const auto& [gguf, hf] : kLayerTensors) {
    if (rest.substr(dot + 1) == gguf) return fmt::format("model.layers.{}.{}", layer, hf);
  }
  return {};
}

namespace {

// Llama's q and k rows were permuted by llama.cpp's converter (Qwen's were not): the number of
// heads the rows are grouped in, or 0 for a tensor left as it was.
std::size_t permuted_heads(const GgufFile& file, const ModelConfig& config, std::string_view name) {
  if (gguf_architecture(file) != "llama") return 0;
  if (name.ends_with(".attn_q.weight") || name.ends_with(".attn_q.bias")) return config.num_heads;
  if (name.ends_with(".attn_k.weight") || name.ends_with(".attn_k.bias")) return config.num_kv_heads;
  return 0;
}

ElementType float_element_type(WeightScheme scheme) {
  switch (scheme) {
    case WeightScheme::kF32: return ElementType::kF32;
    case WeightScheme::kF16: return ElementType::kF16;
    case WeightScheme::kBf16: return ElementType::kBf16;
    default: fail(ErrorKind::kInternal, "{} is not a float scheme", weight_scheme_name(scheme));
  }
}

std::vector<std::int64_t> hf_shape(const GgufTensor& t) {
  return {t.dims.rbegin(), t.dims.rend()};  // ggml lists the fastest-varying dimension first
}

}  // namespace

bool GgufModel::is_gguf_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

GgufModel::GgufModel(const fs::path& path, GgufImportOptions options)
    : file_(path), config_(gguf_model_config(file_)), options_(options) {
  std::map<std::string, int> requantized;  // GGUF type name -> tensors re-quantised
  for (const GgufTensor& t : file_.tensors()) {
    if (t.name == "rope_freqs.weight") continue;  // read into the config's RoPE factors
    const std::string name = hf_tensor_name(t.name);
    if (name.empty()) {
      fail(ErrorKind::kUnsupported, "{}: tensor '{}' has no place in a {} model as kiln runs it", origin(), t.name,
           gguf_architecture(file_));
    }
    if (t.dims.size() > 2)
      fail("{}: tensor '{}' has {} dimensions; kiln's weights have 1 or 2", origin(), t.name, t.dims.size());
    import_tensor(t, name, requantized);
    // A tensor copied out of the map no longer needs its file pages resident.
    if (views_.at(name).bytes.data() != t.bytes.data()) release_file_pages(t.bytes);
  }
  if (!requantized.empty()) {
    std::string types;
    for (const auto& [type, count] : requantized)
      types += fmt::format("{}{} ({} tensors)", types.empty() ? "" : ", ", type, count);
    init_logging();
    spdlog::warn("{}: {} have no exact kiln format: decoded and re-quantised to {}, group {}", origin(), types,
                 weight_scheme_name(options_.requantize), options_.group_size);
  }
}

void GgufModel::import_tensor(const GgufTensor& t, const std::string& name, std::map<std::string, int>& requantized) {
  const std::size_t heads = permuted_heads(file_, config_, t.name);
  const std::optional<WeightScheme> exact = exact_kiln_scheme(t.type);
  const std::size_t rows = t.dims.size() == 1 ? t.dims[0] : t.dims[1];
  if (heads > 0 && rows % (2 * heads) != 0) {
    fail("{}: tensor '{}' has {} rows, which do not split into {} heads of an even size", origin(), t.name, rows,
         heads);
  }

  if (t.dims.size() == 1) {  // norms and biases: values, as f32 unless stored as a float type
    std::vector<float> values(t.dims[0]);
    dequantize_gguf(t.type, t.bytes, values);
    if (heads > 0) {
      const std::vector<float> permuted = values;
      const std::vector<std::size_t> order = unpermute_rows(values.size(), heads);
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = permuted[order[i]];
    } else if (exact && is_float_scheme(*exact)) {
      views_.emplace(name, TensorView{name, float_element_type(*exact), hf_shape(t), t.bytes, std::nullopt});
      return;
    }
    std::vector<std::uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    add_values(name, ElementType::kF32, hf_shape(t), std::move(bytes));
    return;
  }

  const std::vector<std::size_t> order = heads > 0 ? unpermute_rows(rows, heads) : identity_rows(rows);
  if (exact && is_float_scheme(*exact)) {
    const ElementType dtype = float_element_type(*exact);
    if (heads == 0) {
      views_.emplace(name, TensorView{name, dtype, hf_shape(t), t.bytes, std::nullopt});
    } else {
      add_values(name, dtype, hf_shape(t), reorder_float_rows(t, order));
    }
  } else if (exact) {
    add_matrix(name, import_exact_blocks(t, order));
  } else {
    ++requantized[*ggml_type_name(static_cast<std::uint32_t>(t.type))];
    add_matrix(name, requantize(t, order, name));
  }
}

QuantizedMatrix GgufModel::requantize(const GgufTensor& t, std::span<const std::size_t> order,
                                      const std::string& name) const {
  // A band of rows at a time, so that no f32 copy of a whole matrix (1 GB for a 128k-token
  // embedding) is ever made. Bands start on even rows: packed 4-bit zero points of a band then
  // start on a byte.
  constexpr std::size_t kBandRows = 256;
  const std::size_t rows = order.size();
  const std::size_t in = t.dims[0];
  const std::size_t group_size = std::min(options_.group_size, in);
  QuantizedMatrix m(options_.requantize, rows, in, group_size);
  const std::size_t groups = num_groups(in, group_size);
  for (std::size_t first = 0; first < rows; first += kBandRows) {
    const std::size_t n = std::min(kBandRows, rows - first);
    const QuantizedMatrix band =
        quantize_weights(decode_rows(t, order.subspan(first, n)), n, in, options_.requantize, group_size, name);
    std::copy(band.data().begin(), band.data().end(),
              m.data().begin() + static_cast<std::ptrdiff_t>(code_bytes(options_.requantize, first * in)));
    std::copy(band.scales().begin(), band.scales().end(),
              m.scales().begin() + static_cast<std::ptrdiff_t>(first * groups));
    if (has_zero_points(options_.requantize)) {
      std::copy(band.zero_points().begin(), band.zero_points().end(),
                m.zero_points().begin() + static_cast<std::ptrdiff_t>(code_bytes(options_.requantize, first * groups)));
    }
  }
  return m;
}

void GgufModel::add_matrix(const std::string& name, QuantizedMatrix matrix) {
  const QuantizedMatrix& m = matrices_.emplace_back(std::move(matrix));
  const std::vector<std::int64_t> shape = {static_cast<std::int64_t>(m.out()), static_cast<std::int64_t>(m.in())};
  if (is_float_scheme(m.scheme())) {
    views_.emplace(name, TensorView{name, float_element_type(m.scheme()), shape, m.data(), std::nullopt});
    return;
  }
  TensorQuantization q;
  q.scheme = m.scheme();
  q.group_size = static_cast<std::int64_t>(m.group_size());
  q.scales = {reinterpret_cast<const std::uint8_t*>(m.scales().data()), m.scales().size() * sizeof(std::uint16_t)};
  q.zero_points = m.zero_points();
  views_.emplace(name, TensorView{name, ElementType::kU8, shape, m.data(), q});
}

void GgufModel::add_values(const std::string& name, ElementType dtype, std::vector<std::int64_t> shape,
                           std::vector<std::uint8_t> bytes) {
  const std::vector<std::uint8_t>& stored = converted_.emplace_back(std::move(bytes));
  views_.emplace(name, TensorView{name, dtype, std::move(shape), stored, std::nullopt});
}

}  // namespace kiln::ir
