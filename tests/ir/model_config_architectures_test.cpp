// Oracle: the config.json texts of published checkpoints (Qwen2.5-0.5B-Instruct, Qwen3-0.6B,
// Mistral-7B-v0.1, Phi-3-mini-128k-instruct, Phi-4-mini-instruct; long lists shortened) and what
// transformers derives from them: which projections have biases, which layers slide, LongRoPE's
// attention factor sqrt(1 + ln(factor) / ln(original context)).
#include <gtest/gtest.h>

#include <cmath>

#include "ir/model_config.hpp"
#include "support/test_support.hpp"

namespace kiln::ir {
namespace {

Json qwen25_config() {
  return Json::parse(R"({
    "architectures": ["Qwen2ForCausalLM"], "bos_token_id": 151643, "eos_token_id": 151645,
    "hidden_act": "silu", "hidden_size": 896, "intermediate_size": 4864, "max_position_embeddings": 32768,
    "max_window_layers": 21, "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
    "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_sliding_window": false, "vocab_size": 151936})");
}

Json qwen3_config() {
  return Json::parse(R"({
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 1024, "intermediate_size": 3072, "max_position_embeddings": 40960, "max_window_layers": 28,
    "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
    "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null, "tie_word_embeddings": true,
    "use_sliding_window": false, "vocab_size": 151936})");
}

Json mistral_config() {
  return Json::parse(R"({
    "architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
    "sliding_window": 4096, "tie_word_embeddings": false, "vocab_size": 32000})");
}

// Phi-3-mini-128k: the older spelling (rope_scaling.type, original context at the top level).
Json phi3_config() {
  Json j = Json::parse(R"({
    "architectures": ["Phi3ForCausalLM"], "bos_token_id": 1, "eos_token_id": 32000, "hidden_act": "silu",
    "hidden_size": 3072, "intermediate_size": 8192, "max_position_embeddings": 131072, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 262144, "tie_word_embeddings": false,
    "vocab_size": 32064})");
  j["rope_scaling"] = {{"type", "longrope"},
                       {"short_factor", std::vector<double>(48, 1.05)},
                       {"long_factor", std::vector<double>(48, 1.5)}};
  return j;
}

ModelConfig parse(const Json& j) { return parse_model_config(j, "config.json"); }

void expect_round_trip(const ModelConfig& a) {
  const ModelConfig b = parse_model_config(to_json(a), "model.json");
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(b.family, a.family);
  EXPECT_EQ(b.attention_bias, a.attention_bias);
  EXPECT_EQ(b.attention_output_bias, a.attention_output_bias);
  EXPECT_EQ(b.qk_norm, a.qk_norm);
  EXPECT_EQ(b.rotary_dim, a.rotary_dim);
  EXPECT_EQ(b.sliding_window, a.sliding_window);
  EXPECT_EQ(b.sliding_layers, a.sliding_layers);
  EXPECT_EQ(b.rope_scaling.short_factor, a.rope_scaling.short_factor);
  EXPECT_DOUBLE_EQ(b.rope_scaling.attention_factor, a.rope_scaling.attention_factor);
}

TEST(ArchitectureConfig, Qwen25HasQkvBiasesOnlyAndNoWindowWhenSwitchedOff) {
  const ModelConfig c = parse(qwen25_config());
  EXPECT_EQ(c.family, "qwen2");
  EXPECT_TRUE(c.attention_bias);
  EXPECT_FALSE(c.attention_output_bias);
  EXPECT_FALSE(c.mlp_bias);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.rotary_dim, 64);
  EXPECT_EQ(c.sliding_window, 0);  // use_sliding_window false: sliding_window is ignored, as in HF
  expect_round_trip(c);
}

TEST(ArchitectureConfig, Qwen2SlidingWindowFromMaxWindowLayersOn) {
  Json j = qwen25_config();
  j["use_sliding_window"] = true;
  j["sliding_window"] = 4096;
  const ModelConfig c = parse(j);
  EXPECT_EQ(c.sliding_window, 4096);
  ASSERT_EQ(c.sliding_layers.size(), 24u);
  EXPECT_FALSE(c.sliding_layers[20]);
  EXPECT_TRUE(c.sliding_layers[21]);
  EXPECT_EQ(c.window_of_layer(0), 0);
  EXPECT_EQ(c.window_of_layer(23), 4096);
  expect_round_trip(c);
  j["layer_types"] = Json::array();
  EXPECT_KILN_ERROR(parse(j), "layer_types", "24 layers");
  j["sliding_window"] = 0;
  j.erase("layer_types");
  EXPECT_KILN_ERROR(parse(j), "sliding_window", "must be positive");
}

TEST(ArchitectureConfig, Qwen3HasPerHeadNormsAndNeedsHeadDim) {
  const ModelConfig c = parse(qwen3_config());
  EXPECT_EQ(c.family, "qwen3");
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_FALSE(c.attention_output_bias);
  EXPECT_EQ(c.head_dim, 128);  // not hidden / heads (64)
  EXPECT_EQ(c.q_dim(), 2048);
  EXPECT_EQ(c.sliding_window, 0);
  expect_round_trip(c);
  Json j = qwen3_config();
  j["attention_bias"] = true;  // Qwen3 applies it to q, k, v and o alike
  EXPECT_TRUE(parse(j).attention_output_bias);
  j.erase("head_dim");
  EXPECT_KILN_ERROR(parse(j), "head_dim", "Qwen3");
}

TEST(ArchitectureConfig, MistralWindowsEveryLayerUnlessNull) {
  const ModelConfig c = parse(mistral_config());
  EXPECT_EQ(c.family, "mistral");
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.sliding_window, 4096);
  EXPECT_EQ(c.window_of_layer(0), 4096);
  EXPECT_EQ(c.window_of_layer(31), 4096);
  expect_round_trip(c);
  Json j = mistral_config();  // v0.2 / v0.3 / Nemo
  j["sliding_window"] = nullptr;
  EXPECT_EQ(parse(j).sliding_window, 0);
  j = mistral_config();
  j["attention_bias"] = true;  // not a Mistral field: no biases are expected
  EXPECT_FALSE(parse(j).attention_bias);
}

TEST(ArchitectureConfig, Phi3LongRopeInTheOlderSpelling) {
  const ModelConfig c = parse(phi3_config());
  EXPECT_EQ(c.family, "phi3");
  EXPECT_TRUE(c.fused_projections);
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::kLongRope);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 4096);
  EXPECT_DOUBLE_EQ(c.rope_scaling.factor, 32.0);  // 131072 / 4096
  EXPECT_NEAR(c.rope_scaling.attention_factor, std::sqrt(1.0 + std::log(32.0) / std::log(4096.0)), 1e-12);
  EXPECT_EQ(c.rope_scaling.short_factor.size(), 48u);
  EXPECT_EQ(c.sliding_window, 262144);
  expect_round_trip(c);
  Json j = phi3_config();
  j["rope_scaling"]["short_factor"] = std::vector<double>(47, 1.0);
  EXPECT_KILN_ERROR(parse(j), "short_factor", "list of 48 numbers");
  j = phi3_config();
  j.erase("original_max_position_embeddings");
  EXPECT_KILN_ERROR(parse(j), "original_max_position_embeddings");
}

TEST(ArchitectureConfig, Phi4MiniPartialRotaryInRopeParameters) {
  Json j = phi3_config();
  j.erase("rope_scaling");
  j.erase("rope_theta");
  j["num_attention_heads"] = 24;
  j["num_key_value_heads"] = 8;
  j["rope_parameters"] = {{"rope_type", "longrope"},
                          {"rope_theta", 10000.0},
                          {"partial_rotary_factor", 0.75},
                          {"short_factor", std::vector<double>(48, 1.0)},
                          {"long_factor", std::vector<double>(48, 2.0)},
                          {"original_max_position_embeddings", 4096},
                          {"factor", 32.0},
                          {"attention_factor", 1.2}};
  const ModelConfig c = parse(j);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rotary_dim, 96);
  EXPECT_DOUBLE_EQ(c.rope_scaling.attention_factor, 1.2);
  expect_round_trip(c);
  j["rope_parameters"]["partial_rotary_factor"] = 0.0;
  EXPECT_KILN_ERROR(parse(j), "partial_rotary_factor", "(0, 1]");
  j["rope_parameters"]["partial_rotary_factor"] = 0.01;  // 1.28 dims: nothing even to rotate
  EXPECT_KILN_ERROR(parse(j), "partial_rotary_factor", "even");
}

TEST(ArchitectureConfig, LlamaIgnoresSlidingWindowAndKeepsBothBiases) {
  Json j = mistral_config();
  j["architectures"] = {"LlamaForCausalLM"};
  j["attention_bias"] = true;
  const ModelConfig c = parse(j);
  EXPECT_EQ(c.sliding_window, 0);  // not a Llama field
  EXPECT_TRUE(c.attention_bias);
  EXPECT_TRUE(c.attention_output_bias);
}

}  // namespace
}  // namespace kiln::ir
