#include "ir/gguf_config.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "ir/gguf_dequantize.hpp"
#include "ir/gguf_vocab.hpp"
#include "util/error.hpp"

namespace kiln::ir {
namespace {

struct GgufArchitectureName {
  std::string_view gguf;      // general.architecture
  std::string_view hf_class;  // the config.json class it stands for
};

// Mistral's GGUFs say "llama": the forward pass is the same (llama.cpp runs them without the
// sliding window, and so does kiln, from the same file).
constexpr std::array<GgufArchitectureName, 3> kGgufArchitectures = {{
    {"llama", "LlamaForCausalLM"},
    {"qwen2", "Qwen2ForCausalLM"},
    {"qwen3", "Qwen3ForCausalLM"},
}};

const GgufTensor* find_tensor(const GgufFile& file, std::string_view name) {
  for (const GgufTensor& t : file.tensors()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const GgufTensor& require_tensor(const GgufFile& file, std::string_view name) {
  const GgufTensor* t = find_tensor(file, name);
  if (t == nullptr) fail("{}: tensor '{}' is missing", file.path().string(), name);
  return *t;
}

// The metadata as one JSON object, so JsonFields checks presence and types and names the key.
Json metadata_object(const GgufFile& file) {
  Json object = Json::object();
  for (const auto& [key, value] : file.metadata()) object[key] = value;
  return object;
}

// llama.cpp's per-frequency divisors of Llama 3's RoPE scaling, one per rotated pair.
Json rope_frequency_factors(const GgufFile& file, const GgufTensor& t, std::int64_t rotary_dim) {
  if (t.dims.size() != 1 || static_cast<std::int64_t>(t.dims[0]) != rotary_dim / 2) {
    fail("{}: tensor 'rope_freqs.weight' must hold rope.dimension_count / 2 = {} factors", file.path().string(),
         rotary_dim / 2);
  }
  std::vector<float> factors(t.dims[0]);
  dequantize_gguf(t.type, t.bytes, factors);
  Json list = Json::array();
  for (float f : factors) list.push_back(static_cast<double>(f));
  return list;
}

}  // namespace

std::string supported_gguf_architectures() {
  std::string s;
  for (const auto& a : kGgufArchitectures) s += (s.empty() ? "" : ", ") + std::string(a.gguf);
  return s;
}

std::string gguf_architecture(const GgufFile& file) {
  const Json* arch = file.find("general.architecture");
  if (arch == nullptr || !arch->is_string()) {
    fail("{}: metadata key general.architecture is missing or not a string", file.path().string());
  }
  const std::string name = arch->get<std::string>();
  for (const auto& a : kGgufArchitectures) {
    if (a.gguf == name) return name;
  }
  fail(ErrorKind::kUnsupported, "{}: general.architecture '{}' is not supported (supported: {})", file.path().string(),
       name, supported_gguf_architectures());
}

Json gguf_config_json(const GgufFile& file) {
  const std::string arch = gguf_architecture(file);
  const Json meta = metadata_object(file);
  const JsonFields f(meta, file.path().string() + ": metadata");
  const auto key = [&](std::string_view suffix) { return arch + "." + std::string(suffix); };

  Json c = Json::object();
  for (const auto& a : kGgufArchitectures) {
    if (a.gguf == arch) c["architectures"] = Json::array({std::string(a.hf_class)});
  }
  c["hidden_act"] = "silu";
  c["hidden_size"] = f.get<std::int64_t>(key("embedding_length"));
  c["num_hidden_layers"] = f.get<std::int64_t>(key("block_count"));
  c["intermediate_size"] = f.get<std::int64_t>(key("feed_forward_length"));
  const auto heads = f.get<std::int64_t>(key("attention.head_count"));
  c["num_attention_heads"] = heads;
  c["num_key_value_heads"] = f.get_or<std::int64_t>(key("attention.head_count_kv"), heads);
  c["max_position_embeddings"] = f.get<std::int64_t>(key("context_length"));
  c["rms_norm_eps"] = f.get<double>(key("attention.layer_norm_rms_epsilon"));

  // The head size: key_length when written, else what the q projection's rows say.
  const GgufTensor& q = require_tensor(file, "blk.0.attn_q.weight");
  std::int64_t head_dim = 0;
  if (f.has(key("attention.key_length"))) {
    head_dim = f.get<std::int64_t>(key("attention.key_length"));
    const auto value_length = f.get_or<std::int64_t>(key("attention.value_length"), head_dim);
    if (value_length != head_dim) {
      f.fail_field(
          key("attention.value_length"),
          fmt::format("({}) differs from attention.key_length ({}): kiln needs them equal", value_length, head_dim));
    }
  } else if (q.dims.size() == 2 && heads > 0) {
    head_dim = static_cast<std::int64_t>(q.dims[1]) / heads;
  }
  c["head_dim"] = head_dim;

  // Vocabulary and head: the embedding's rows; no output.weight means the head is tied to it.
  const GgufTensor& embedding = require_tensor(file, "token_embd.weight");
  if (embedding.dims.size() != 2) fail("{}: tensor 'token_embd.weight' must be 2-D", file.path().string());
  c["vocab_size"] = embedding.dims[1];
  c["tie_word_embeddings"] = find_tensor(file, "output.weight") == nullptr;
  c["attention_bias"] = find_tensor(file, "blk.0.attn_q.bias") != nullptr;
  c["mlp_bias"] = find_tensor(file, "blk.0.ffn_up.bias") != nullptr;

  Json rope = Json::object();
  rope["rope_theta"] = f.get_or<double>(key("rope.freq_base"), 10000.0);
  const auto rotary_dim = f.get_or<std::int64_t>(key("rope.dimension_count"), head_dim);
  if (head_dim > 0 && rotary_dim != head_dim) {
    rope["partial_rotary_factor"] = static_cast<double>(rotary_dim) / static_cast<double>(head_dim);
  }
  const std::string scaling = f.get_or<std::string>(key("rope.scaling.type"), "none");
  if (const GgufTensor* freqs = find_tensor(file, "rope_freqs.weight")) {
    rope["rope_type"] = "longrope";
    rope["short_factor"] = rope["long_factor"] = rope_frequency_factors(file, *freqs, rotary_dim);
    rope["factor"] = 1.0;
    rope["attention_factor"] = 1.0;
    rope["original_max_position_embeddings"] = c["max_position_embeddings"];
  } else if (scaling == "linear") {
    rope["rope_type"] = "linear";
    rope["factor"] = f.get<double>(key("rope.scaling.factor"));
  } else if (scaling == "none") {
    rope["rope_type"] = "default";
  } else {
    f.fail_field(key("rope.scaling.type"), fmt::format("'{}' is not supported (accepted: none, linear)", scaling));
  }
  c["rope_parameters"] = std::move(rope);

  if (const auto bos = f.get_optional<std::int64_t>("tokenizer.ggml.bos_token_id")) c["bos_token_id"] = *bos;
  // Every token llama.cpp ends a generation at: its files name one EOS id, while chat models end
  // turns with another token ("<|eot_id|>" beside Llama 3's "<|end_of_text|>").
  c["eos_token_id"] = gguf_end_of_generation_ids(file);
  return c;
}

ModelConfig gguf_model_config(const GgufFile& file) {
  return parse_model_config(gguf_config_json(file), file.path().string() + ": metadata (as config.json)");
}

}  // namespace kiln::ir
