// The hyper-parameters a forward pass needs, parsed from a Hugging Face `config.json` and
// validated so every later stage can trust them (positive sizes, heads divisible by KV heads,
// a known RoPE scaling). Architecture differences (Qwen's biases and q/k norms, sliding windows,
// Phi-3's fused projections) become explicit fields here, so the forward pass reads no class
// names. The IR's model.json stores the same struct.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace kiln::ir {

enum class RopeScalingType { kNone, kLinear, kLlama3, kLongRope };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::kNone;
  double factor = 1.0;
  // llama3 only: frequencies are interpolated between these wavelength bands.
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  std::int64_t original_max_position_embeddings = 8192;  // llama3 and longrope
  // longrope only (Phi-3): per-frequency divisors [rotary_dim / 2] for contexts up to
  // original_max_position_embeddings, and the factor cos and sin are multiplied by.
  std::vector<double> short_factor{};
  std::vector<double> long_factor{};
  double attention_factor = 1.0;
};

struct ModelConfig {
  std::string architecture;  // the HF class name, e.g. "LlamaForCausalLM"
  std::string family;        // kiln's forward implementation, e.g. "llama"
  std::int64_t hidden_size = 0;
  std::int64_t num_layers = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool attention_bias = false;         // q, k and v projections have biases
  bool attention_output_bias = false;  // o_proj has a bias (Llama's attention_bias; not Qwen2)
  bool mlp_bias = false;
  bool qk_norm = false;            // Qwen3: RMSNorm over each head of q and k before RoPE
  bool fused_projections = false;  // Phi-3: qkv_proj and gate_up_proj (split on load)
  std::int64_t rotary_dim = 0;     // leading dims of each head that RoPE rotates (<= head_dim)
  // 0: full causal attention. Else a row at position p attends to positions > p - sliding_window
  // in the layers marked in sliding_layers [num_layers] (HF's sliding-window mask).
  std::int64_t sliding_window = 0;
  std::vector<bool> sliding_layers;
  std::optional<std::int32_t> bos_token_id;
  std::vector<std::int32_t> eos_token_ids;
  std::string torch_dtype;  // as declared ("bfloat16", ...); informational

  std::int64_t q_dim() const { return num_heads * head_dim; }
  std::int64_t kv_dim() const { return num_kv_heads * head_dim; }
  // The window of layer `l`, or 0 when it attends to the whole context.
  std::int64_t window_of_layer(std::int64_t l) const {
    return sliding_window > 0 && sliding_layers[static_cast<std::size_t>(l)] ? sliding_window : 0;
  }
};

// The HF architectures kiln can run, for error messages: "LlamaForCausalLM, ...".
std::string supported_architectures();

// Parses and validates; `origin` (usually the file path) prefixes every error message.
ModelConfig parse_model_config(const Json& json, const std::string& origin);
ModelConfig load_model_config(const std::filesystem::path& config_json);

// Round trip for the IR: to_json(parse(x)) keeps every field kiln uses, in HF's names.
Json to_json(const ModelConfig& config);

}  // namespace kiln::ir
