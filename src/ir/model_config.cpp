#include "ir/model_config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "util/error.hpp"

namespace kiln::ir {
namespace {

struct Architecture {
  std::string_view hf_class;
  std::string_view family;
};

// Llama 2, 3, 3.1, 3.2, TinyLlama and SmolLM all use LlamaForCausalLM; Qwen2 covers Qwen2 and
// Qwen2.5; Mistral covers v0.1-v0.3 and Nemo.
constexpr std::array<Architecture, 5> kArchitectures{{{"LlamaForCausalLM", "llama"},
                                                      {"Qwen2ForCausalLM", "qwen2"},
                                                      {"Qwen3ForCausalLM", "qwen3"},
                                                      {"MistralForCausalLM", "mistral"},
                                                      {"Phi3ForCausalLM", "phi3"}}};

// Sizes past these are corruption, not large models (the largest have ~130 layers, and widths
// and vocabularies under 2^20). Bounding them keeps every product of two sizes inside int64
// and the per-layer work of a load (the sliding-window table, Phi-3's split) small.
constexpr std::int64_t kMaxSize = std::int64_t{1} << 31;
constexpr std::int64_t kMaxLayers = 4096;

std::int64_t positive(const JsonFields& f, std::string_view key, std::int64_t max = kMaxSize) {
  const auto v = f.get<std::int64_t>(key);
  if (v <= 0) f.fail_field(key, fmt::format("must be positive, got {}", v));
  if (v > max) f.fail_field(key, fmt::format("must be at most {}, got {}", max, v));
  return v;
}

std::vector<double> parse_factor_list(const JsonFields& rs, std::string_view key, std::int64_t count) {
  const Json& list = rs.object().contains(key) ? rs.object()[std::string(key)] : Json();
  if (!list.is_array() || static_cast<std::int64_t>(list.size()) != count) {
    rs.fail_field(key, fmt::format("must be a list of {} numbers (rotary_dim / 2)", count));
  }
  std::vector<double> factors;
  for (const Json& v : list) {
    if (!v.is_number() || v.get<double>() <= 0) rs.fail_field(key, "must hold positive numbers");
    factors.push_back(v.get<double>());
  }
  return factors;
}

// Phi-3's LongRoPE (HF _compute_longrope_parameters): `top` is the whole config, which older
// checkpoints use for original_max_position_embeddings.
void parse_longrope(const JsonFields& rs, const JsonFields& top, const ModelConfig& c, RopeScaling& scaling) {
  scaling.type = RopeScalingType::kLongRope;
  scaling.original_max_position_embeddings = rs.has("original_max_position_embeddings")
                                                 ? rs.get<std::int64_t>("original_max_position_embeddings")
                                                 : top.get<std::int64_t>("original_max_position_embeddings");
  if (scaling.original_max_position_embeddings <= 1) {
    rs.fail_field("original_max_position_embeddings", "must be greater than 1");
  }
  scaling.short_factor = parse_factor_list(rs, "short_factor", c.rotary_dim / 2);
  scaling.long_factor = parse_factor_list(rs, "long_factor", c.rotary_dim / 2);
  scaling.factor = rs.get_or<double>("factor", static_cast<double>(c.max_position_embeddings) /
                                                   static_cast<double>(scaling.original_max_position_embeddings));
  const double suggested =
      scaling.factor <= 1.0
          ? 1.0
          : std::sqrt(1.0 + std::log(scaling.factor) / std::log(double(scaling.original_max_position_embeddings)));
  scaling.attention_factor = rs.get_or<double>("attention_factor", suggested);
}

// `rs` is the scaling object: HF's `rope_scaling` (older configs) or `rope_parameters` (newer).
RopeScaling parse_rope_scaling(const JsonFields& rs, const JsonFields& top, const ModelConfig& c) {
  RopeScaling scaling;
  // HF renamed "type" to "rope_type"; checkpoints carry either.
  const std::string type =
      rs.has("rope_type") ? rs.get<std::string>("rope_type") : rs.get_or<std::string>("type", "default");
  if (type == "default") return scaling;
  if (type == "longrope") {
    parse_longrope(rs, top, c, scaling);
    return scaling;
  }
  scaling.factor = rs.get<double>("factor");
  if (scaling.factor < 1.0) rs.fail_field("factor", fmt::format("must be >= 1, got {}", scaling.factor));
  if (type == "linear") {
    scaling.type = RopeScalingType::kLinear;
  } else if (type == "llama3") {
    scaling.type = RopeScalingType::kLlama3;
    scaling.low_freq_factor = rs.get<double>("low_freq_factor");
    scaling.high_freq_factor = rs.get<double>("high_freq_factor");
    scaling.original_max_position_embeddings = rs.get<std::int64_t>("original_max_position_embeddings");
    if (scaling.high_freq_factor <= scaling.low_freq_factor) {
      rs.fail_field("high_freq_factor", "must be greater than low_freq_factor");
    }
    if (scaling.original_max_position_embeddings <= 0) {
      rs.fail_field("original_max_position_embeddings", "must be positive");
    }
  } else {
    rs.fail_field(rs.has("rope_type") ? "rope_type" : "type",
                  fmt::format("'{}' is not supported (accepted: default, linear, llama3, longrope)", type));
  }
  return scaling;
}

// The rotated part of each head: partial_rotary_factor * head_dim (HF truncates), even.
void parse_rotary_dim(const JsonFields& fields, ModelConfig& c) {
  const double fraction = fields.get_or<double>("partial_rotary_factor", 1.0);
  if (fraction <= 0 || fraction > 1) fields.fail_field("partial_rotary_factor", "must be in (0, 1]");
  // The epsilon keeps model.json's rotary_dim / head_dim from truncating one below.
  c.rotary_dim = static_cast<std::int64_t>(static_cast<double>(c.head_dim) * fraction + 1e-9);
  if (c.rotary_dim < 2 || c.rotary_dim % 2 != 0) {
    fields.fail_field(
        "partial_rotary_factor",
        fmt::format("gives {} rotated dims of head_dim {}; RoPE needs an even number", c.rotary_dim, c.head_dim));
  }
}

// RoPE base and scaling: transformers >= 5 nests both (and partial_rotary_factor) in
// `rope_parameters`; older configs have them at the top level.
void parse_rope(const JsonFields& f, ModelConfig& c) {
  if (f.has("rope_parameters")) {
    JsonFields rp(f.object()["rope_parameters"], f.origin() + ": rope_parameters");
    c.rope_theta = rp.get_or<double>("rope_theta", 10000.0);
    parse_rotary_dim(rp.has("partial_rotary_factor") ? rp : f, c);
    c.rope_scaling = parse_rope_scaling(rp, f, c);
  } else {
    c.rope_theta = f.get_or<double>("rope_theta", 10000.0);
    parse_rotary_dim(f, c);
    if (f.has("rope_scaling")) {
      c.rope_scaling = parse_rope_scaling(JsonFields(f.object()["rope_scaling"], f.origin() + ": rope_scaling"), f, c);
    }
  }
  if (c.rope_theta <= 0) f.fail_field("rope_theta", "must be positive");
}

// Which layers use HF's sliding-window mask. `layer_types` (transformers >= 4.53, and kiln's
// model.json) says it per layer; otherwise Qwen2/3 window the layers from max_window_layers on
// when use_sliding_window is set, and Mistral / Phi-3 window every layer when sliding_window is
// not null.
void parse_sliding_window(const JsonFields& f, ModelConfig& c) {
  const bool qwen = c.family == "qwen2" || c.family == "qwen3";
  const bool enabled = qwen ? f.get_or<bool>("use_sliding_window", false) : c.family != "llama";
  const std::optional<std::int64_t> window = enabled ? f.get_optional<std::int64_t>("sliding_window") : std::nullopt;
  if (!window) return;
  if (*window <= 0) f.fail_field("sliding_window", fmt::format("must be positive or null, got {}", *window));
  c.sliding_window = *window;
  c.sliding_layers.assign(static_cast<std::size_t>(c.num_layers), true);
  if (f.has("layer_types")) {
    const Json& types = f.object()["layer_types"];
    if (!types.is_array() || static_cast<std::int64_t>(types.size()) != c.num_layers) {
      f.fail_field("layer_types", fmt::format("must list one type for each of the {} layers", c.num_layers));
    }
    for (std::size_t l = 0; l < types.size(); ++l) {
      const std::string type = types[l].is_string() ? types[l].get<std::string>() : "";
      if (type != "sliding_attention" && type != "full_attention") {
        f.fail_field("layer_types", fmt::format("entry {} must be \"sliding_attention\" or \"full_attention\"", l));
      }
      c.sliding_layers[l] = type == "sliding_attention";
    }
  } else if (qwen) {
    const std::int64_t first = f.get_or<std::int64_t>("max_window_layers", 0);
    for (std::int64_t l = 0; l < std::min(first, c.num_layers); ++l)
      c.sliding_layers[static_cast<std::size_t>(l)] = false;
  }
}

// The biases, norms and fused tensors each family's attention and MLP have.
void parse_family_layout(const JsonFields& f, ModelConfig& c) {
  if (c.family == "llama" || c.family == "qwen3") {
    c.attention_bias = c.attention_output_bias = f.get_or<bool>("attention_bias", false);
  } else if (c.family == "qwen2") {
    c.attention_bias = true;  // Qwen2's q/k/v always have biases; its o_proj never
  }
  c.mlp_bias = c.family == "llama" && f.get_or<bool>("mlp_bias", false);
  c.qk_norm = c.family == "qwen3";
  c.fused_projections = c.family == "phi3";
}

std::vector<std::int32_t> parse_eos(const JsonFields& f) {
  if (!f.has("eos_token_id")) return {};
  const Json& eos = f.object()["eos_token_id"];
  if (eos.is_number_integer()) return {eos.get<std::int32_t>()};
  if (!eos.is_array()) f.fail_field("eos_token_id", "must be an integer or a list of integers");
  std::vector<std::int32_t> ids;
  for (const Json& id : eos) {
    if (!id.is_number_integer()) f.fail_field("eos_token_id", "must be an integer or a list of integers");
    ids.push_back(id.get<std::int32_t>());
  }
  return ids;
}

}  // namespace

std::string supported_architectures() {
  std::string s;
  for (const auto& a : kArchitectures) {
    if (!s.empty()) s += ", ";
    s += a.hf_class;
  }
  return s;
}

ModelConfig parse_model_config(const Json& json, const std::string& origin) {
  JsonFields f(json, origin);
  ModelConfig c;
  if (!f.has("architectures")) f.fail_field("architectures", "is missing: cannot tell which model this is");
  const Json& archs = json["architectures"];
  if (!archs.is_array() || archs.size() != 1 || !archs[0].is_string()) {
    f.fail_field("architectures", "must be a list with one class name");
  }
  c.architecture = archs[0].get<std::string>();
  for (const auto& a : kArchitectures) {
    if (a.hf_class == c.architecture) c.family = a.family;
  }
  if (c.family.empty()) {
    fail(ErrorKind::kUnsupported, "{}: architecture '{}' is not supported (supported: {})", origin, c.architecture,
         supported_architectures());
  }
  const std::string act = f.get_or<std::string>("hidden_act", "silu");
  if (act != "silu") f.fail_field("hidden_act", fmt::format("'{}' is not supported (accepted: silu)", act));

  c.hidden_size = positive(f, "hidden_size");
  c.num_layers = positive(f, "num_hidden_layers", kMaxLayers);
  c.num_heads = positive(f, "num_attention_heads");
  c.num_kv_heads = f.has("num_key_value_heads") ? positive(f, "num_key_value_heads") : c.num_heads;
  if (c.num_heads % c.num_kv_heads != 0) {
    f.fail_field("num_key_value_heads",
                 fmt::format("({}) must divide num_attention_heads ({})", c.num_kv_heads, c.num_heads));
  }
  if (f.has("head_dim") && !f.object()["head_dim"].is_null()) {
    c.head_dim = positive(f, "head_dim");
  } else if (c.family == "qwen3") {
    // HF's Qwen3Config silently defaults to 128, which is rarely hidden / heads.
    f.fail_field("head_dim", "is missing: Qwen3 configs must give it");
  } else {
    if (c.hidden_size % c.num_heads != 0) {
      f.fail_field("hidden_size",
                   fmt::format("({}) is not divisible by num_attention_heads ({}) and no head_dim is given",
                               c.hidden_size, c.num_heads));
    }
    c.head_dim = c.hidden_size / c.num_heads;
  }
  if (c.head_dim % 2 != 0) f.fail_field("head_dim", fmt::format("must be even for RoPE, got {}", c.head_dim));
  c.intermediate_size = positive(f, "intermediate_size");
  c.vocab_size = positive(f, "vocab_size");
  c.max_position_embeddings = f.has("max_position_embeddings") ? positive(f, "max_position_embeddings") : 2048;
  c.rms_norm_eps = f.get_or<double>("rms_norm_eps", 1e-6);
  if (c.rms_norm_eps <= 0) f.fail_field("rms_norm_eps", "must be positive");
  parse_rope(f, c);
  parse_sliding_window(f, c);
  parse_family_layout(f, c);
  c.tie_word_embeddings = f.get_or<bool>("tie_word_embeddings", false);
  c.bos_token_id = f.get_optional<std::int32_t>("bos_token_id");
  c.eos_token_ids = parse_eos(f);
  c.torch_dtype = f.get_or<std::string>("torch_dtype", f.get_or<std::string>("dtype", ""));
  return c;
}

ModelConfig load_model_config(const std::filesystem::path& config_json) {
  return parse_model_config(read_json_file(config_json), config_json.string());
}

Json to_json(const ModelConfig& c) {
  Json j = {
      {"architectures", {c.architecture}},
      {"hidden_size", c.hidden_size},
      {"num_hidden_layers", c.num_layers},
      {"num_attention_heads", c.num_heads},
      {"num_key_value_heads", c.num_kv_heads},
      {"head_dim", c.head_dim},
      {"intermediate_size", c.intermediate_size},
      {"vocab_size", c.vocab_size},
      {"max_position_embeddings", c.max_position_embeddings},
      {"rms_norm_eps", c.rms_norm_eps},
      {"rope_theta", c.rope_theta},
      {"tie_word_embeddings", c.tie_word_embeddings},
      {"attention_bias", c.attention_bias},
      {"mlp_bias", c.mlp_bias},
      {"hidden_act", "silu"},
  };
  if (c.rope_scaling.type == RopeScalingType::kLinear) {
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", c.rope_scaling.factor}};
  } else if (c.rope_scaling.type == RopeScalingType::kLlama3) {
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", c.rope_scaling.factor},
                         {"low_freq_factor", c.rope_scaling.low_freq_factor},
                         {"high_freq_factor", c.rope_scaling.high_freq_factor},
                         {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
  } else if (c.rope_scaling.type == RopeScalingType::kLongRope) {
    j["rope_scaling"] = {{"rope_type", "longrope"},
                         {"factor", c.rope_scaling.factor},
                         {"attention_factor", c.rope_scaling.attention_factor},
                         {"short_factor", c.rope_scaling.short_factor},
                         {"long_factor", c.rope_scaling.long_factor},
                         {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
  }
  if (c.rotary_dim != c.head_dim) {
    j["partial_rotary_factor"] = static_cast<double>(c.rotary_dim) / static_cast<double>(c.head_dim);
  }
  if (c.sliding_window > 0) {
    j["use_sliding_window"] = true;
    j["sliding_window"] = c.sliding_window;
    Json types = Json::array();
    for (bool sliding : c.sliding_layers) types.push_back(sliding ? "sliding_attention" : "full_attention");
    j["layer_types"] = types;
  }
  if (c.bos_token_id) j["bos_token_id"] = *c.bos_token_id;
  if (!c.eos_token_ids.empty()) j["eos_token_id"] = c.eos_token_ids;
  if (!c.torch_dtype.empty()) j["torch_dtype"] = c.torch_dtype;
  return j;
}

}  // namespace kiln::ir
