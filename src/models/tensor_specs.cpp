#include "models/tensor_specs.hpp"

#include <set>

#include "util/error.hpp"

namespace kiln::models {
namespace {

// Llama's layout, with the variations the config names (biases, q/k norms). Phi-3's fused
// qkv_proj / gate_up_proj appear here already split: ir::HfCheckpoint splits them on load.
std::vector<TensorSpec> decoder_tensor_specs(const ir::ModelConfig& c) {
  std::vector<TensorSpec> specs;
  specs.push_back(
      {"model.embed_tokens.weight", {c.vocab_size, c.hidden_size}, TensorRole::kEmbedding, WeightUse::kEmbedding});
  for (std::int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    auto add = [&](std::string name, std::vector<std::int64_t> shape, TensorRole role, WeightUse use) {
      specs.push_back({p + name, std::move(shape), role, use, l});
    };
    add("input_layernorm.weight", {c.hidden_size}, TensorRole::kNorm, WeightUse::kVector);
    add("self_attn.q_proj.weight", {c.q_dim(), c.hidden_size}, TensorRole::kAttention, WeightUse::kMatrix);
    add("self_attn.k_proj.weight", {c.kv_dim(), c.hidden_size}, TensorRole::kAttention, WeightUse::kMatrix);
    add("self_attn.v_proj.weight", {c.kv_dim(), c.hidden_size}, TensorRole::kAttention, WeightUse::kMatrix);
    add("self_attn.o_proj.weight", {c.hidden_size, c.q_dim()}, TensorRole::kAttention, WeightUse::kMatrix);
    if (c.attention_bias) {
      add("self_attn.q_proj.bias", {c.q_dim()}, TensorRole::kAttention, WeightUse::kVector);
      add("self_attn.k_proj.bias", {c.kv_dim()}, TensorRole::kAttention, WeightUse::kVector);
      add("self_attn.v_proj.bias", {c.kv_dim()}, TensorRole::kAttention, WeightUse::kVector);
    }
    if (c.attention_output_bias)
      add("self_attn.o_proj.bias", {c.hidden_size}, TensorRole::kAttention, WeightUse::kVector);
    if (c.qk_norm) {
      add("self_attn.q_norm.weight", {c.head_dim}, TensorRole::kNorm, WeightUse::kVector);
      add("self_attn.k_norm.weight", {c.head_dim}, TensorRole::kNorm, WeightUse::kVector);
    }
    add("post_attention_layernorm.weight", {c.hidden_size}, TensorRole::kNorm, WeightUse::kVector);
    add("mlp.gate_proj.weight", {c.intermediate_size, c.hidden_size}, TensorRole::kMlp, WeightUse::kMatrix);
    add("mlp.up_proj.weight", {c.intermediate_size, c.hidden_size}, TensorRole::kMlp, WeightUse::kMatrix);
    add("mlp.down_proj.weight", {c.hidden_size, c.intermediate_size}, TensorRole::kMlp, WeightUse::kMatrix);
    if (c.mlp_bias) {
      add("mlp.gate_proj.bias", {c.intermediate_size}, TensorRole::kMlp, WeightUse::kVector);
      add("mlp.up_proj.bias", {c.intermediate_size}, TensorRole::kMlp, WeightUse::kVector);
      add("mlp.down_proj.bias", {c.hidden_size}, TensorRole::kMlp, WeightUse::kVector);
    }
  }
  specs.push_back({"model.norm.weight", {c.hidden_size}, TensorRole::kNorm, WeightUse::kVector});
  if (!c.tie_word_embeddings) {
    specs.push_back({"lm_head.weight", {c.vocab_size, c.hidden_size}, TensorRole::kHead, WeightUse::kMatrix});
  }
  return specs;
}

}  // namespace

bool is_decoder_family(std::string_view family) {
  return family == "llama" || family == "qwen2" || family == "qwen3" || family == "mistral" || family == "phi3";
}

std::string_view tensor_role_name(TensorRole role) {
  switch (role) {
    case TensorRole::kEmbedding: return "embedding";
    case TensorRole::kHead: return "head";
    case TensorRole::kAttention: return "attention";
    case TensorRole::kMlp: return "mlp";
    case TensorRole::kNorm: return "norm";
  }
  return "?";
}

std::vector<TensorSpec> tensor_specs(const ir::ModelConfig& config) {
  if (is_decoder_family(config.family)) return decoder_tensor_specs(config);
  fail(ErrorKind::kUnsupported, "no forward pass for model family '{}' (supported: {})", config.family,
       ir::supported_architectures());
}

bool is_ignorable_extra_tensor(const ir::ModelConfig& config, std::string_view name) {
  // A tied head is the embedding; some exporters still write the copy.
  if (config.tie_word_embeddings && name == "lm_head.weight") return true;
  // Old Llama checkpoints saved the rotary buffer; kiln recomputes it from the config.
  return name.ends_with(".rotary_emb.inv_freq");
}

void validate_tensors(const ir::ModelConfig& config, const ir::TensorSource& source) {
  constexpr std::size_t kMaxListed = 12;
  std::vector<std::string> problems;
  std::set<std::string, std::less<>> expected;
  for (const TensorSpec& spec : tensor_specs(config)) {
    expected.insert(spec.name);
    const ir::TensorView* t = source.find(spec.name);
    if (t == nullptr) {
      problems.push_back(
          fmt::format("missing tensor '{}' (expected shape {})", spec.name, ir::format_shape(spec.shape)));
    } else if (t->shape != spec.shape) {
      problems.push_back(fmt::format("tensor '{}' has shape {}, but config.json implies {}", spec.name,
                                     ir::format_shape(t->shape), ir::format_shape(spec.shape)));
    } else if (t->is_quantized() && spec.use == WeightUse::kVector) {
      problems.push_back(
          fmt::format("tensor '{}' is quantised ({}), but it is a {} vector and must be F32, F16 or BF16", spec.name,
                      weight_scheme_name(t->quantization->scheme), tensor_role_name(spec.role)));
    } else if (!t->is_quantized() && !is_float_weight_type(t->dtype)) {
      problems.push_back(fmt::format("tensor '{}' has dtype {} (accepted: F32, F16, BF16, or a quantised IR weight)",
                                     spec.name, element_type_name(t->dtype)));
    }
  }
  for (const std::string& name : source.names()) {
    if (!expected.contains(name) && !is_ignorable_extra_tensor(config, name)) {
      problems.push_back(
          fmt::format("unexpected tensor '{}' (not part of {} with this config)", name, config.architecture));
    }
  }
  if (problems.empty()) return;
  std::string message = fmt::format("{}: {} problem(s) with the weights:", source.origin(), problems.size());
  for (std::size_t i = 0; i < problems.size() && i < kMaxListed; ++i) message += "\n  - " + problems[i];
  if (problems.size() > kMaxListed) message += fmt::format("\n  ... and {} more", problems.size() - kMaxListed);
  throw Error(ErrorKind::kInvalidInput, message);
}

}  // namespace kiln::models
