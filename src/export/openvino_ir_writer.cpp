#include "export/openvino_ir_writer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>

#include "export/openvino_graph_writer.hpp"
#include "export/openvino_tokenizer_writer.hpp"
#include "export/side_files.hpp"
#include "models/rope.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"

namespace kiln::exporter {
namespace {

namespace fs = std::filesystem;

std::span<const std::uint8_t> as_bytes(const std::vector<float>& v) {
  return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(float)};
}

std::string float_type(ElementType t) {
  switch (t) {
    case ElementType::kF32: return "f32";
    case ElementType::kF16: return "f16";
    case ElementType::kBf16: return "bf16";
    default: return "";
  }
}

std::string code_type(WeightScheme s) {
  switch (s) {
    case WeightScheme::kInt4Sym: return "i4";
    case WeightScheme::kInt4Asym: return "u4";
    case WeightScheme::kInt8Sym: return "i8";
    case WeightScheme::kInt8Asym: return "u8";
    case WeightScheme::kNf4: return "nf4";
    default: return "";
  }
}

std::vector<std::int64_t> with_last(std::vector<std::int64_t> dims, std::int64_t last) {
  dims.back() = last;
  return dims;
}

// The decoder of the Llama family, built layer by layer as optimum's converter names it.
class DecoderGraph {
 public:
  DecoderGraph(const ir::TensorSource& weights, const ir::ModelConfig& config) : w_(weights), c_(config) {}

  OvGraphWriter& build();

 private:
  const ir::TensorView& tensor(const std::string& name, const std::vector<std::int64_t>& shape) const;
  OvPort matrix(const std::string& name, std::int64_t out, std::int64_t in);
  OvPort vector(const std::string& name, std::int64_t n, std::size_t rank);
  OvPort rms_norm(const std::string& module, OvPort x);
  OvPort linear(const std::string& module, OvPort x, std::int64_t in, std::int64_t out, bool bias);
  OvPort rotate(const std::string& module, OvPort x, std::int64_t heads, int index);
  OvPort cache(std::int64_t layer, const std::string& kind, OvPort fresh);
  OvPort expand_kv(const std::string& module, OvPort kv, int index);
  OvPort attention(std::int64_t layer, OvPort x);
  OvPort mlp(std::int64_t layer, OvPort x);
  OvPort mask(std::int64_t window);
  OvPort inverse_frequencies();
  void rope_tables();

  OvPort binary(const std::string& type, const std::string& name, OvPort a, OvPort b, const OvTensorType& out) {
    return g_.op(type, "opset1", name, {{"auto_broadcast", "numpy"}}, {a, b}, out);
  }
  OvPort unsqueeze(OvPort x, std::int64_t axis, const OvTensorType& out) {
    return g_.op("Unsqueeze", "opset1", "", {}, {x, g_.i64_constant({axis})}, out);
  }
  OvPort reshape(const std::string& name, OvPort x, const std::vector<std::int64_t>& pattern, const OvTensorType& out) {
    return g_.op("Reshape", "opset1", name, {{"special_zero", "true"}}, {x, g_.i64_constant(pattern)}, out);
  }
  OvPort transpose(const std::string& name, OvPort x, const std::vector<std::int64_t>& order, const OvTensorType& out) {
    return g_.op("Transpose", "opset1", name, {}, {x, g_.i64_constant(order)}, out);
  }

  const ir::TensorSource& w_;
  const ir::ModelConfig& c_;
  OvGraphWriter g_;
  OvPort input_ids_, attention_mask_, position_ids_, beam_idx_;
  OvPort cos_, sin_, cache_init_;
  std::map<std::int64_t, OvPort> masks_;  // by window (0: full causal)
};

const ir::TensorView& DecoderGraph::tensor(const std::string& name, const std::vector<std::int64_t>& shape) const {
  const ir::TensorView* t = w_.find(name);
  if (t == nullptr) fail("{}: no tensor '{}', which the OpenVINO graph needs", w_.origin(), name);
  if (t->shape != shape) {
    fail("{}: tensor '{}' has shape {}, the config implies {}", w_.origin(), name, ir::format_shape(t->shape),
         ir::format_shape(shape));
  }
  return *t;
}

// The f32 [out, in] weight, through NNCF's decompression subgraph for a quantised one.
OvPort DecoderGraph::matrix(const std::string& name, std::int64_t out, std::int64_t in) {
  const ir::TensorView& t = tensor(name, {out, in});
  const std::string self = "self." + name;
  const OvTensorType result{"f32", {out, in}};
  if (!t.is_quantized()) {
    const std::string type = float_type(t.dtype);
    if (type.empty()) fail("{}: tensor '{}' is neither quantised nor f32 / f16 / bf16", w_.origin(), name);
    if (type == "f32") return g_.constant(self, {"f32", {out, in}}, t.bytes);
    const OvPort values = g_.constant(self + "_compressed", {type, {out, in}}, t.bytes);
    return g_.op("Convert", "opset1", self, {{"destination_type", "f32"}}, {values}, result);
  }
  const ir::TensorQuantization& q = *t.quantization;
  const std::string codes_type = code_type(q.scheme);
  if (codes_type.empty()) fail("{}: tensor '{}' has scheme {}", w_.origin(), name, weight_scheme_name(q.scheme));
  const std::int64_t group = q.group_size;
  if (group <= 0 || group > in || in % group != 0) {
    fail(ErrorKind::kUnsupported,
         "{}: tensor '{}' is quantised in groups of {} along {} inputs; NNCF's layout needs groups that divide the "
         "input",
         w_.origin(), name, group, in);
  }
  const std::int64_t groups = in / group;
  const bool grouped = groups > 1;
  const std::vector<std::int64_t> code_dims =
      grouped ? std::vector<std::int64_t>{out, groups, group} : std::vector<std::int64_t>{out, in};
  const std::vector<std::int64_t> param_dims =
      grouped ? std::vector<std::int64_t>{out, groups, 1} : std::vector<std::int64_t>{out, 1};
  const OvPort codes = g_.constant(self, {codes_type, code_dims}, t.bytes);
  OvPort values = g_.op("Convert", "opset1", "", {{"destination_type", "f16"}}, {codes}, {"f16", code_dims});
  if (has_zero_points(q.scheme)) {
    const OvPort zp = g_.constant(self + "/zero_point", {codes_type, param_dims}, q.zero_points);
    const OvPort zp16 = g_.op("Convert", "opset1", "", {{"destination_type", "f16"}}, {zp}, {"f16", param_dims});
    values = binary("Subtract", self + "/zero_point/subtract", values, zp16, {"f16", code_dims});
  }
  const OvPort scale = g_.constant(self + "/scale", {"f16", param_dims}, q.scales);
  values = binary("Multiply", self + "/fq_weights_1", values, scale, {"f16", code_dims});
  if (grouped) {
    values = g_.op("Reshape", "opset1", "", {{"special_zero", "false"}}, {values, g_.i64_constant({out, in})},
                   {"f16", {out, in}});
  }
  return g_.op("Convert", "opset1", self + "/fq_weights_1/convert", {{"destination_type", "f32"}}, {values}, result);
}

// A norm's gamma or a bias as an f32 [1, ..., 1, n] of `rank` dims.
OvPort DecoderGraph::vector(const std::string& name, std::int64_t n, std::size_t rank) {
  const ir::TensorView& t = tensor(name, {n});
  std::vector<std::int64_t> dims(rank, 1);
  dims.back() = n;
  const std::string type = float_type(t.dtype);
  if (type.empty() || t.is_quantized()) fail("{}: tensor '{}' is not f32 / f16 / bf16", w_.origin(), name);
  if (type == "f32") return g_.constant("self." + name, {"f32", dims}, t.bytes);
  const OvPort values = g_.constant("self." + name + "_compressed", {type, dims}, t.bytes);
  return g_.op("Convert", "opset1", "self." + name, {{"destination_type", "f32"}}, {values}, {"f32", dims});
}

// Power -> ReduceMean -> Add(eps) -> Sqrt -> Divide(1, .) -> Multiply(x, .) -> Multiply(gamma, .).
OvPort DecoderGraph::rms_norm(const std::string& module, OvPort x) {
  const OvTensorType& xt = g_.type_of(x);
  const std::vector<std::int64_t> dims = xt.dims;
  const std::vector<std::int64_t> ones(dims.size(), 1);
  const std::string m = "__module." + module;
  const OvPort two = g_.f32_constant({2.0f}, ones);
  const OvPort squared = binary("Power", m + "/aten::pow/Power", x, two, {"f32", dims});
  const OvPort mean = g_.op("ReduceMean", "opset1", m + "/aten::mean/ReduceMean", {{"keep_dims", "true"}},
                            {squared, g_.i64_constant({-1})}, {"f32", with_last(dims, 1)});
  const OvPort eps = g_.f32_constant({static_cast<float>(c_.rms_norm_eps)}, ones);
  const OvPort sum = binary("Add", m + "/aten::add/Add", mean, eps, {"f32", with_last(dims, 1)});
  const OvPort root = g_.op("Sqrt", "opset1", m + "/aten::rsqrt/Sqrt", {}, {sum}, {"f32", with_last(dims, 1)});
  const OvPort one = g_.f32_constant({1.0f}, ones);
  const OvPort inverse =
      g_.op("Divide", "opset1", m + "/aten::rsqrt/Divide", {{"auto_broadcast", "numpy"}, {"m_pythondiv", "true"}},
            {one, root}, {"f32", with_last(dims, 1)});
  const OvPort normed = binary("Multiply", m + "/aten::mul/Multiply", x, inverse, {"f32", dims});
  const OvPort gamma = vector(module + ".weight", dims.back(), dims.size());
  return binary("Multiply", m + "/aten::mul/Multiply_1", gamma, normed, {"f32", dims});
}

OvPort DecoderGraph::linear(const std::string& module, OvPort x, std::int64_t in, std::int64_t out, bool bias) {
  const OvPort weight = matrix(module + ".weight", out, in);
  const std::string m = "__module." + module + "/aten::linear/";
  OvPort y = g_.op("MatMul", "opset1", m + "MatMul", {{"transpose_a", "false"}, {"transpose_b", "true"}}, {x, weight},
                   {"f32", {kDyn, kDyn, out}});
  if (bias) y = binary("Add", m + "Add", y, vector(module + ".bias", out, 3), {"f32", {kDyn, kDyn, out}});
  return y;
}

// The inverse frequencies [1, rotary_dim / 2, 1]: a Const, or for LongRoPE computed in the graph
// as optimum spells it: the long factors when the context (max position_ids + 1) exceeds
// original_max_position_embeddings, else the short ones, times theta^(2i / rotary_dim), inverted.
OvPort DecoderGraph::inverse_frequencies() {
  const std::string m = "__module.model.rotary_emb/";
  const ir::RopeScaling& s = c_.rope_scaling;
  if (s.type != ir::RopeScalingType::kLongRope) {
    const std::vector<double> inv = models::rope_inverse_frequencies(c_);
    std::vector<float> inv32(inv.begin(), inv.end());
    return g_.constant(m + "aten::to/Convert", {"f32", {1, static_cast<std::int64_t>(inv.size()), 1}}, as_bytes(inv32));
  }
  const std::int64_t half = c_.rotary_dim / 2;
  const auto f32_vector = [&](const std::string& name, std::vector<float> values) {
    return g_.constant(name, {"f32", {half}}, as_bytes(values));
  };
  std::vector<float> long_factor(s.long_factor.begin(), s.long_factor.end());
  std::vector<float> short_factor(s.short_factor.begin(), s.short_factor.end());
  std::vector<float> base(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    base[static_cast<std::size_t>(i)] =
        static_cast<float>(std::pow(c_.rope_theta, static_cast<double>(2 * i) / static_cast<double>(c_.rotary_dim)));
  }
  const OvPort last = g_.op("ReduceMax", "opset1", m + "aten::max/ReduceMax", {{"keep_dims", "false"}},
                            {position_ids_, g_.i64_constant({0, 1})}, {"i64", {}});
  const OvPort context = binary("Add", m + "aten::add/Add", last, g_.i64_constant({1}, true), {"i64", {}});
  const OvPort longer = binary("Greater", m + "aten::gt/Greater", context,
                               g_.i64_constant({s.original_max_position_embeddings}, true), {"boolean", {}});
  const OvPort factor = g_.op(
      "Select", "opset1", m + "aten::where/Select", {{"auto_broadcast", "numpy"}},
      {longer, f32_vector(m + "aten::to/Convert", long_factor), f32_vector(m + "aten::to/Convert_1", short_factor)},
      {"f32", {half}});
  const OvPort scaled =
      binary("Multiply", m + "aten::mul/Multiply", factor, f32_vector(m + "aten::pow/Power", base), {"f32", {half}});
  const OvPort inv =
      binary("Power", m + "aten::reciprocal/Power", scaled, g_.f32_constant({-1.0f}, {1}), {"f32", {half}});
  return unsqueeze(unsqueeze(inv, 0, {"f32", {1, half}}), 2, {"f32", {1, half, 1}});
}

// cos / sin [batch, 1, tokens, rotary_dim] from position_ids and the inverse frequencies, times
// LongRoPE's attention factor.
void DecoderGraph::rope_tables() {
  const std::int64_t half = c_.rotary_dim / 2;
  const std::string m = "__module.model.rotary_emb/";
  const OvPort freq = inverse_frequencies();
  const OvPort pos = unsqueeze(position_ids_, 1, {"i64", {kDyn, 1, kDyn}});
  const OvPort pos32 = g_.op("Convert", "opset1", m + "aten::to/Convert_3", {{"destination_type", "f32"}}, {pos},
                             {"f32", {kDyn, 1, kDyn}});
  const OvPort angles =
      g_.op("MatMul", "opset1", m + "aten::matmul/MatMul", {{"transpose_a", "false"}, {"transpose_b", "false"}},
            {freq, pos32}, {"f32", {kDyn, half, kDyn}});
  const OvPort t = transpose(m + "aten::transpose/Transpose", angles, {0, 2, 1}, {"f32", {kDyn, kDyn, half}});
  const OvTensorType table{"f32", {kDyn, kDyn, 2 * half}};
  const OvPort emb = g_.op("Concat", "opset1", m + "aten::cat/Concat", {{"axis", "-1"}}, {t, t}, table);
  OvPort cos = g_.op("Cos", "opset1", m + "aten::cos/Cos", {}, {emb}, table);
  OvPort sin = g_.op("Sin", "opset1", m + "aten::sin/Sin", {}, {emb}, table);
  if (c_.rope_scaling.type == ir::RopeScalingType::kLongRope && c_.rope_scaling.attention_factor != 1.0) {
    const auto magnitude = static_cast<float>(c_.rope_scaling.attention_factor);
    cos = binary("Multiply", m + "aten::mul/Multiply_2", cos, g_.f32_constant({magnitude}, {1, 1, 1}), table);
    sin = binary("Multiply", m + "aten::mul/Multiply_3", sin, g_.f32_constant({magnitude}, {1, 1, 1}), table);
  }
  cos_ = unsqueeze(cos, 1, {"f32", {kDyn, 1, kDyn, 2 * half}});
  sin_ = unsqueeze(sin, 1, {"f32", {kDyn, 1, kDyn, 2 * half}});
}

// x * cos + rotate_half(x) * sin over the first rotary_dim of each head, x [batch, heads, tokens,
// head_dim]; the rest of the head (partial rotary) passes through.
OvPort DecoderGraph::rotate(const std::string& module, OvPort x, std::int64_t heads, int index) {
  const std::int64_t d = c_.head_dim, r = c_.rotary_dim;
  const OvTensorType full{"f32", {kDyn, heads, kDyn, d}};
  const OvTensorType rotated_type{"f32", {kDyn, heads, kDyn, r}};
  const OvTensorType part{"f32", {kDyn, heads, kDyn, r / 2}};
  const std::string m = "__module." + module + "/";
  const auto slice = [&](OvPort from, std::int64_t begin, std::int64_t end, const OvTensorType& type) {
    return g_.op("Slice", "opset8", "", {},
                 {from, g_.i64_constant({begin}), g_.i64_constant({end}), g_.i64_constant({1}), g_.i64_constant({3})},
                 type);
  };
  const OvPort head = r == d ? x : slice(x, 0, r, rotated_type);
  const OvPort first = slice(head, 0, r / 2, part);
  const OvPort second = slice(head, r / 2, r, part);
  const OvPort negated =
      binary("Multiply", fmt::format("{}aten::neg/Multiply_{}", m, index), second, g_.f32_constant({-1.0f}, {}), part);
  const OvPort rotated = g_.op("Concat", "opset1", "", {{"axis", "-1"}}, {negated, first}, rotated_type);
  const OvPort a = binary("Multiply", fmt::format("{}aten::mul/Multiply_{}", m, 2 * index), head, cos_, rotated_type);
  const OvPort b =
      binary("Multiply", fmt::format("{}aten::mul/Multiply_{}", m, 2 * index + 1), rotated, sin_, rotated_type);
  const OvPort sum = binary("Add", fmt::format("{}aten::add/Add_{}", m, index), a, b, rotated_type);
  if (r == d) return sum;
  return g_.op("Concat", "opset1", fmt::format("{}aten::cat/Concat_{}", m, index), {{"axis", "-1"}},
               {sum, slice(x, r, d, {"f32", {kDyn, heads, kDyn, d - r}})}, full);
}

// The past keys or values (ReadValue, reordered by beam_idx) with this step's appended; the
// result is what Assign keeps for the next step.
OvPort DecoderGraph::cache(std::int64_t layer, const std::string& kind, OvPort fresh) {
  const std::int64_t kv = c_.num_kv_heads, d = c_.head_dim;
  const OvTensorType type{"f32", {kDyn, kv, kDyn, d}};
  const std::string variable = fmt::format("past_key_values.{0}.{1}present.{0}.{1}", layer, kind);
  const OvPort past =
      g_.op("ReadValue", "opset6", "",
            {{"variable_id", variable}, {"variable_type", "f32"}, {"variable_shape", fmt::format("?,{},?,{}", kv, d)}},
            {cache_init_}, type);
  g_.name_output(past, fmt::format("past_key_values.{}.{}", layer, kind));
  const OvPort reordered =
      g_.op("Gather", "opset8", "", {{"batch_dims", "0"}}, {past, beam_idx_, g_.i64_constant({0}, true)}, type);
  const OvPort all = g_.op("Concat", "opset1", "", {{"axis", "2"}}, {reordered, fresh}, type);
  g_.name_output(all, fmt::format("present.{}.{}", layer, kind));
  g_.sink("Assign", "opset6", "", {{"variable_id", variable}}, {all}, &type);
  return all;
}

// [batch, kv_heads, S, d] -> [batch, heads, S, d], each KV head repeated for its query heads.
OvPort DecoderGraph::expand_kv(const std::string& module, OvPort kv, int index) {
  const std::int64_t nkv = c_.num_kv_heads, nh = c_.num_heads, d = c_.head_dim;
  if (nkv == nh) return kv;
  const std::string m = "__module." + module + "/";
  const OvPort u = g_.op("Unsqueeze", "opset1", fmt::format("{}aten::unsqueeze/Unsqueeze_{}", m, index), {},
                         {kv, g_.i64_constant({2})}, {"f32", {kDyn, nkv, 1, kDyn, d}});
  const OvPort b =
      g_.op("Broadcast", "opset3", fmt::format("{}aten::expand/Broadcast_{}", m, index), {{"mode", "bidirectional"}},
            {u, g_.i64_constant({1, 1, nh / nkv, 1, 1})}, {"f32", {kDyn, nkv, nh / nkv, kDyn, d}});
  return reshape(fmt::format("{}aten::reshape/Reshape_{}", m, index), b, {0, nh, -1, d}, {"f32", {kDyn, nh, kDyn, d}});
}

// The additive mask [batch, 1, tokens, S]: 0 where key position <= query position (and, with a
// window, > query position - window) and attention_mask is 1; else the lowest f32. A window is
// spelled as optimum's export spells it (Greater(key, Add(query, -window)) and four BitwiseAnds
// into Broadcast and Select), the form OpenVINO's SDPA-to-PagedAttention rewrite reads the window
// from.
OvPort DecoderGraph::mask(std::int64_t window) {
  if (const auto it = masks_.find(window); it != masks_.end()) return it->second;
  const std::string m = "__module.model/";
  const OvPort shape = g_.op("ShapeOf", "opset3", "", {{"output_type", "i64"}}, {attention_mask_}, {"i64", {2}});
  const OvPort total = g_.op("Gather", "opset8", "", {{"batch_dims", "0"}},
                             {shape, g_.i64_constant({1}, true), g_.i64_constant({0}, true)}, {"i64", {}});
  const OvPort keys = g_.op("Range", "opset4", "", {{"output_type", "i64"}},
                            {g_.i64_constant({0}, true), total, g_.i64_constant({1}, true)}, {"i64", {kDyn}});
  const OvPort queries =
      g_.op("Unsqueeze", "opset1", "", {}, {position_ids_, g_.i64_constant({1, 3})}, {"i64", {kDyn, 1, kDyn, 1}});
  const OvTensorType cond{"boolean", {kDyn, 1, kDyn, kDyn}};
  const OvPort causal = binary("LessEqual", "", keys, queries, cond);
  const OvPort padding = g_.op(
      "Unsqueeze", "opset1", "", {},
      {g_.op("Convert", "opset1", "", {{"destination_type", "boolean"}}, {attention_mask_}, {"boolean", {kDyn, kDyn}}),
       g_.i64_constant({1, 2})},
      {"boolean", {kDyn, 1, 1, kDyn}});
  OvPort allowed;
  if (window > 0) {
    const std::vector<std::int64_t> offset = {-window};
    const OvPort lowest = binary(
        "Add", fmt::format("{}aten::sub/Subtract_{}", m, window), queries,
        g_.constant("", {"i64", {1, 1, 1, 1}}, std::span(reinterpret_cast<const std::uint8_t*>(offset.data()), 8)),
        {"i64", {kDyn, 1, kDyn, 1}});
    const std::uint8_t yes = 1;
    const auto all = [&] { return g_.constant("", {"boolean", {}}, std::span(&yes, 1)); };
    const auto both = [&](OvPort a, OvPort b) { return g_.op("BitwiseAnd", "opset13", "", {}, {a, b}, cond); };
    allowed = both(all(), binary("Greater", fmt::format("{}aten::gt/Greater_{}", m, window), keys, lowest, cond));
    allowed = both(both(all(), both(allowed, causal)), padding);
    const OvPort target = g_.op("ShapeOf", "opset3", "", {{"output_type", "i64"}}, {allowed}, {"i64", {4}});
    allowed = g_.op("Broadcast", "opset3", "", {{"mode", "numpy"}}, {allowed, target}, cond);
  } else {
    allowed = binary("LogicalAnd", "", causal, padding, cond);
  }
  const OvPort result =
      g_.op("Select", "opset1", fmt::format("{}aten::where/Select_{}", m, window), {{"auto_broadcast", "numpy"}},
            {allowed, g_.f32_constant({0.0f}, {}), g_.f32_constant({std::numeric_limits<float>::lowest()}, {})},
            {"f32", {kDyn, 1, kDyn, kDyn}});
  masks_.emplace(window, result);
  return result;
}

OvPort DecoderGraph::attention(std::int64_t layer, OvPort x) {
  const std::int64_t h = c_.hidden_size, nh = c_.num_heads, nkv = c_.num_kv_heads, d = c_.head_dim;
  const std::string module = fmt::format("model.layers.{}.self_attn", layer);
  const std::string m = "__module." + module + "/";
  const auto heads = [&](const std::string& proj, std::int64_t n, int index) {
    const OvPort y = linear(module + "." + proj, x, h, n * d, c_.attention_bias);
    OvPort split =
        reshape(fmt::format("{}aten::view/Reshape_{}", m, index), y, {0, 0, n, d}, {"f32", {kDyn, kDyn, n, d}});
    if (c_.qk_norm && index < 2) split = rms_norm(module + (index == 0 ? ".q_norm" : ".k_norm"), split);
    return transpose(fmt::format("{}aten::transpose/Transpose_{}", m, index), split, {0, 2, 1, 3},
                     {"f32", {kDyn, n, kDyn, d}});
  };
  const OvPort q = rotate(module, heads("q_proj", nh, 0), nh, 0);
  const OvPort k = rotate(module, heads("k_proj", nkv, 1), nkv, 1);
  const OvPort v = heads("v_proj", nkv, 2);
  const OvPort keys = expand_kv(module, cache(layer, "key", k), 0);
  const OvPort values = expand_kv(module, cache(layer, "value", v), 1);
  const OvPort scale = g_.f32_constant({static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))}, {});
  const OvPort attended = g_.op(
      "ScaledDotProductAttention", "opset13", m + "aten::scaled_dot_product_attention/ScaledDotProductAttention",
      {{"causal", "false"}}, {q, keys, values, mask(c_.window_of_layer(layer)), scale}, {"f32", {kDyn, nh, kDyn, d}});
  const OvPort back =
      transpose(m + "aten::transpose/Transpose_3", attended, {0, 2, 1, 3}, {"f32", {kDyn, kDyn, nh, d}});
  const OvPort merged = reshape(m + "aten::reshape/Reshape_2", back, {0, 0, nh * d}, {"f32", {kDyn, kDyn, nh * d}});
  return linear(module + ".o_proj", merged, nh * d, h, c_.attention_output_bias);
}

OvPort DecoderGraph::mlp(std::int64_t layer, OvPort x) {
  const std::int64_t h = c_.hidden_size, f = c_.intermediate_size;
  const std::string module = fmt::format("model.layers.{}.mlp", layer);
  const OvPort gate = linear(module + ".gate_proj", x, h, f, c_.mlp_bias);
  const OvPort up = linear(module + ".up_proj", x, h, f, c_.mlp_bias);
  const OvPort act =
      g_.op("Swish", "opset4", "__module." + module + ".act_fn/aten::silu/Swish", {}, {gate}, {"f32", {kDyn, kDyn, f}});
  const OvPort product =
      binary("Multiply", "__module." + module + "/aten::mul/Multiply", act, up, {"f32", {kDyn, kDyn, f}});
  return linear(module + ".down_proj", product, f, h, c_.mlp_bias);
}

OvGraphWriter& DecoderGraph::build() {
  const std::int64_t h = c_.hidden_size, vocab = c_.vocab_size;
  input_ids_ = g_.parameter("input_ids", {"i64", {kDyn, kDyn}});
  attention_mask_ = g_.parameter("attention_mask", {"i64", {kDyn, kDyn}});
  position_ids_ = g_.parameter("position_ids", {"i64", {kDyn, kDyn}});
  beam_idx_ = g_.parameter("beam_idx", {"i32", {kDyn}});

  // Every KV variable starts as [batch, kv_heads, 0, head_dim] zeros.
  const OvPort ids_shape = g_.op("ShapeOf", "opset3", "", {{"output_type", "i64"}}, {input_ids_}, {"i64", {2}});
  const OvPort batch = g_.op("Gather", "opset8", "", {{"batch_dims", "0"}},
                             {ids_shape, g_.i64_constant({0}), g_.i64_constant({0}, true)}, {"i64", {1}});
  const OvPort init_shape = g_.op(
      "Concat", "opset1", "", {{"axis", "0"}},
      {batch, g_.i64_constant({c_.num_kv_heads}), g_.i64_constant({0}), g_.i64_constant({c_.head_dim})}, {"i64", {4}});
  cache_init_ = g_.op("Broadcast", "opset3", "", {{"mode", "numpy"}}, {g_.f32_constant({0.0f}, {}), init_shape},
                      {"f32", {kDyn, c_.num_kv_heads, 0, c_.head_dim}});

  const OvPort table = matrix("model.embed_tokens.weight", vocab, h);
  const OvPort ids32 = g_.op("Convert", "opset1", "__module.model.embed_tokens/aten::embedding/Convert",
                             {{"destination_type", "i32"}}, {input_ids_}, {"i32", {kDyn, kDyn}});
  OvPort x = g_.op("Gather", "opset8", "__module.model.embed_tokens/aten::embedding/Gather", {{"batch_dims", "0"}},
                   {table, ids32, g_.i32_constant(0)}, {"f32", {kDyn, kDyn, h}});
  rope_tables();
  for (std::int64_t l = 0; l < c_.num_layers; ++l) {
    const std::string layer = fmt::format("model.layers.{}", l);
    const OvTensorType hidden{"f32", {kDyn, kDyn, h}};
    x = binary("Add", fmt::format("__module.{}/aten::add/Add", layer), x,
               attention(l, rms_norm(layer + ".input_layernorm", x)), hidden);
    x = binary("Add", fmt::format("__module.{}/aten::add/Add_1", layer), x,
               mlp(l, rms_norm(layer + ".post_attention_layernorm", x)), hidden);
  }
  x = rms_norm("model.norm", x);
  const OvPort head = c_.tie_word_embeddings ? table : matrix("lm_head.weight", vocab, h);
  const OvPort logits =
      g_.op("MatMul", "opset1", "__module.lm_head/aten::linear/MatMul",
            {{"transpose_a", "false"}, {"transpose_b", "true"}}, {x, head}, {"f32", {kDyn, kDyn, vocab}});
  g_.name_output(logits, "logits");
  g_.sink("Result", "opset1", "Result_logits", {}, {logits}, nullptr);
  return g_;
}

}  // namespace

void check_openvino_export_supported(const ir::ModelConfig& c) {
  const auto refuse = [&](std::string_view field, std::string_view why) {
    fail(ErrorKind::kUnsupported, "OpenVINO IR export of {}: config field '{}' {}: not supported yet", c.architecture,
         field, why);
  };
  if (c.family != "llama" && c.family != "mistral" && c.family != "qwen2" && c.family != "qwen3" &&
      c.family != "phi3") {
    refuse("architectures",
           fmt::format("is {} (the OpenVINO writer knows Llama, Mistral, Qwen2, Qwen3 and Phi-3)", c.architecture));
  }
  if (c.rotary_dim <= 0 || c.rotary_dim > c.head_dim || c.rotary_dim % 2 != 0) {
    refuse("partial_rotary_factor",
           fmt::format("gives {} rotated dims of {} (an even count is needed)", c.rotary_dim, c.head_dim));
  }
  const ir::RopeScaling& s = c.rope_scaling;
  const auto half = static_cast<std::size_t>(c.rotary_dim / 2);
  if (s.type == ir::RopeScalingType::kLongRope && (s.long_factor.size() != half || s.short_factor.size() != half)) {
    refuse("rope_scaling", fmt::format("has {} long and {} short factors for {} frequencies", s.long_factor.size(),
                                       s.short_factor.size(), half));
  }
}

OpenVinoWriteResult write_openvino_ir(const ir::TensorSource& weights, const ir::ModelConfig& config,
                                      const fs::path& dir, const OpenVinoWriteOptions& options) {
  check_openvino_export_supported(config);
  DecoderGraph decoder(weights, config);
  const OvGraphWriter& graph = decoder.build();

  StagingDirectory staging(dir);
  write_file_atomic(staging.path() / kOpenVinoModelXml, graph.xml());
  const std::vector<std::uint8_t>& bin = graph.bin();
  write_file_atomic(staging.path() / kOpenVinoModelBin,
                    std::string_view(reinterpret_cast<const char*>(bin.data()), bin.size()));
  Json hf = ir::to_json(config);
  hf["model_type"] = config.family;
  write_file_atomic(staging.path() / "config.json", hf.dump(2) + "\n");
  OpenVinoWriteResult result;
  if (!options.files_from.empty()) {
    copy_side_files(options.files_from, staging.path());
  }
  if (fs::exists(staging.path() / "tokenizer.json")) {
    try {
      write_openvino_tokenizers(build_openvino_tokenizers(staging.path()), staging.path());
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kUnsupported) throw;
      result.tokenizer_skipped = e.what();
    }
  } else {
    result.tokenizer_skipped = "the source has no tokenizer.json";
  }
  staging.commit();
  return result;
}

}  // namespace kiln::exporter
