#include "ir/model_config.hpp"

#include <array>
#include <string_view>

#include "util/error.hpp"

namespace kiln::ir {
namespace {

struct Architecture {
  std::string_view hf_class;
  std::string_view family;
};

// Llama 2, 3, 3.1, 3.2, TinyLlama and SmolLM all use LlamaForCausalLM.
constexpr std::array<Architecture, 1> kArchitectures{{{"LlamaForCausalLM", "llama"}}};

std::int64_t positive(const JsonFields& f, std::string_view key) {
  const auto v = f.get<std::int64_t>(key);
  if (v <= 0) f.fail_field(key, fmt::format("must be positive, got {}", v));
  return v;
}

// `rs` is the scaling object: HF's `rope_scaling` (older configs) or `rope_parameters` (newer).
RopeScaling parse_rope_scaling(const JsonFields& rs) {
  RopeScaling scaling;
  // HF renamed "type" to "rope_type"; checkpoints carry either.
  const std::string type = rs.has("rope_type") ? rs.get<std::string>("rope_type")
                                               : rs.get_or<std::string>("type", "default");
  if (type == "default") return scaling;
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
                  fmt::format("'{}' is not supported (accepted: default, linear, llama3)", type));
  }
  return scaling;
}

// RoPE base and scaling: transformers >= 5 nests both in `rope_parameters`; older configs have
// `rope_theta` and `rope_scaling` at the top level.
void parse_rope(const JsonFields& f, ModelConfig& c) {
  if (f.has("rope_parameters")) {
    JsonFields rp(f.object()["rope_parameters"], f.origin() + ": rope_parameters");
    c.rope_theta = rp.get_or<double>("rope_theta", 10000.0);
    c.rope_scaling = parse_rope_scaling(rp);
  } else {
    c.rope_theta = f.get_or<double>("rope_theta", 10000.0);
    if (f.has("rope_scaling")) {
      c.rope_scaling = parse_rope_scaling(JsonFields(f.object()["rope_scaling"], f.origin() + ": rope_scaling"));
    }
  }
  if (c.rope_theta <= 0) f.fail_field("rope_theta", "must be positive");
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
    fail(ErrorKind::kUnsupported, "{}: architecture '{}' is not supported (supported: {})", origin,
         c.architecture, supported_architectures());
  }
  const std::string act = f.get_or<std::string>("hidden_act", "silu");
  if (act != "silu") f.fail_field("hidden_act", fmt::format("'{}' is not supported (accepted: silu)", act));

  c.hidden_size = positive(f, "hidden_size");
  c.num_layers = positive(f, "num_hidden_layers");
  c.num_heads = positive(f, "num_attention_heads");
  c.num_kv_heads = f.has("num_key_value_heads") ? positive(f, "num_key_value_heads") : c.num_heads;
  if (c.num_heads % c.num_kv_heads != 0) {
    f.fail_field("num_key_value_heads", fmt::format("({}) must divide num_attention_heads ({})",
                                                    c.num_kv_heads, c.num_heads));
  }
  if (f.has("head_dim")) {
    c.head_dim = positive(f, "head_dim");
  } else {
    if (c.hidden_size % c.num_heads != 0) {
      f.fail_field("hidden_size", fmt::format("({}) is not divisible by num_attention_heads ({}) and no head_dim is given",
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
  c.tie_word_embeddings = f.get_or<bool>("tie_word_embeddings", false);
  c.attention_bias = f.get_or<bool>("attention_bias", false);
  c.mlp_bias = f.get_or<bool>("mlp_bias", false);
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
  }
  if (c.bos_token_id) j["bos_token_id"] = *c.bos_token_id;
  if (!c.eos_token_ids.empty()) j["eos_token_id"] = c.eos_token_ids;
  if (!c.torch_dtype.empty()) j["torch_dtype"] = c.torch_dtype;
  return j;
}

}  // namespace kiln::ir
