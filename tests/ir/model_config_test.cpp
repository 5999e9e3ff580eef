// Oracle: hand-written config.json texts in both the classic (rope_theta + rope_scaling) and
// transformers-5 (rope_parameters) spellings; errors must name the file and the field.
#include "ir/model_config.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace kiln::ir {
namespace {

Json base_config() {
  return Json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 16,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
    "vocab_size": 128256, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
    "rope_theta": 500000.0, "tie_word_embeddings": true, "bos_token_id": 128000,
    "eos_token_id": [128001, 128008, 128009], "torch_dtype": "bfloat16",
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"}})");
}

TEST(ModelConfig, ParsesLlama32Config) {
  const ModelConfig c = parse_model_config(base_config(), "config.json");
  EXPECT_EQ(c.family, "llama");
  EXPECT_EQ(c.hidden_size, 2048);
  EXPECT_EQ(c.num_layers, 16);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.kv_dim(), 512);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::kLlama3);
  EXPECT_DOUBLE_EQ(c.rope_scaling.factor, 32.0);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_DOUBLE_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.bos_token_id, 128000);
  EXPECT_EQ(c.eos_token_ids, (std::vector<std::int32_t>{128001, 128008, 128009}));
}

TEST(ModelConfig, RopeParametersSpelling) {
  Json j = base_config();
  j.erase("rope_scaling");
  j.erase("rope_theta");
  j["rope_parameters"] = {{"rope_type", "linear"}, {"factor", 2.0}, {"rope_theta", 10000.0}};
  const ModelConfig c = parse_model_config(j, "config.json");
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::kLinear);
  EXPECT_DOUBLE_EQ(c.rope_theta, 10000.0);
}

TEST(ModelConfig, ScalarEosAndExplicitHeadDim) {
  Json j = base_config();
  j["eos_token_id"] = 2;
  j["head_dim"] = 128;
  const ModelConfig c = parse_model_config(j, "config.json");
  EXPECT_EQ(c.eos_token_ids, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.q_dim(), 32 * 128);
}

TEST(ModelConfig, RoundTripsThroughJson) {
  const ModelConfig a = parse_model_config(base_config(), "config.json");
  const ModelConfig b = parse_model_config(to_json(a), "model.json");
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(b.rope_scaling.type, RopeScalingType::kLlama3);
  EXPECT_EQ(b.head_dim, a.head_dim);
}

TEST(ModelConfig, UnknownArchitectureListsSupported) {
  Json j = base_config();
  j["architectures"] = {"GPTNeoXForCausalLM"};
  EXPECT_KILN_ERROR(parse_model_config(j, "ckpt/config.json"), "ckpt/config.json", "GPTNeoXForCausalLM",
                    "supported: LlamaForCausalLM");
}

TEST(ModelConfig, FieldErrorsNameTheField) {
  Json j = base_config();
  j.erase("hidden_size");
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "config.json", "missing required field 'hidden_size'");
  j = base_config();
  j["num_key_value_heads"] = 5;
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "num_key_value_heads", "must divide");
  j = base_config();
  j["rope_scaling"]["rope_type"] = "yarn";
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "rope_scaling", "'yarn' is not supported", "llama3");
  j = base_config();
  j["vocab_size"] = -1;
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "vocab_size", "must be positive");
  j = base_config();
  j["hidden_act"] = "gelu";
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "hidden_act", "gelu");
  j = base_config();
  j["eos_token_id"] = "x";
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "eos_token_id");
}

// A model_files_fuzz input: 10^12 layers with a sliding window allocated a 125 GB layer table
// (and made Phi-3's split loop 10^12 times); widths past 2^31 overflow q_dim() and kv_dim().
TEST(ModelConfig, SizesBeyondAnyModelAreRejected) {
  Json j = base_config();
  j["num_hidden_layers"] = 1000000000000;
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "num_hidden_layers", "must be at most 4096");
  j = base_config();
  j["architectures"] = {"MistralForCausalLM"};
  j["sliding_window"] = 4096;
  j["num_hidden_layers"] = 1000000000000;
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "num_hidden_layers", "1000000000000");
  j = base_config();
  j["head_dim"] = 4398046511104;  // 2^42: num_heads * head_dim passes int64 for 2^21+ heads
  EXPECT_KILN_ERROR(parse_model_config(j, "config.json"), "head_dim", "must be at most 2147483648");
}

}  // namespace
}  // namespace kiln::ir
