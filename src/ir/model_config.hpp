// The hyper-parameters a forward pass needs, parsed from a Hugging Face `config.json` and
// validated so every later stage can trust them (positive sizes, heads divisible by KV heads,
// a known RoPE scaling). The IR's model.json stores the same struct.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace kiln::ir {

enum class RopeScalingType { kNone, kLinear, kLlama3 };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::kNone;
  double factor = 1.0;
  // llama3 only: frequencies are interpolated between these wavelength bands.
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  std::int64_t original_max_position_embeddings = 8192;
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
  bool attention_bias = false;
  bool mlp_bias = false;
  std::optional<std::int32_t> bos_token_id;
  std::vector<std::int32_t> eos_token_ids;
  std::string torch_dtype;  // as declared ("bfloat16", ...); informational

  std::int64_t q_dim() const { return num_heads * head_dim; }
  std::int64_t kv_dim() const { return num_kv_heads * head_dim; }
};

// The HF architectures kiln can run, for error messages: "LlamaForCausalLM, ...".
std::string supported_architectures();

// Parses and validates; `origin` (usually the file path) prefixes every error message.
ModelConfig parse_model_config(const Json& json, const std::string& origin);
ModelConfig load_model_config(const std::filesystem::path& config_json);

// Round trip for the IR: to_json(parse(x)) keeps every field kiln uses, in HF's names.
Json to_json(const ModelConfig& config);

}  // namespace kiln::ir
