// Oracle: the documented ranges; each bad value must be rejected naming its field.
#include "kiln/generation_config.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "genai/generation_defaults.hpp"
#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln {
namespace {

TEST(GenerationConfig, RejectsBadValuesNamingTheField) {
  auto bad = [](auto edit, const char* field) {
    GenerationConfig c;
    edit(c);
    EXPECT_KILN_ERROR(c.validate(), field);
  };
  bad([](auto& c) { c.max_new_tokens = -1; }, "max_new_tokens");
  bad([](auto& c) { c.temperature = -0.1; }, "temperature");
  bad(
      [](auto& c) {
        c.do_sample = true;
        c.temperature = 0;
      },
      "temperature");
  bad([](auto& c) { c.top_p = 0; }, "top_p");
  bad([](auto& c) { c.top_p = 1.5; }, "top_p");
  bad([](auto& c) { c.top_k = -2; }, "top_k");
  bad([](auto& c) { c.min_p = 2; }, "min_p");
  bad([](auto& c) { c.repetition_penalty = 0; }, "repetition_penalty");
  bad([](auto& c) { c.presence_penalty = 3; }, "presence_penalty");
  bad(
      [](auto& c) {
        c.max_new_tokens = 4;
        c.min_new_tokens = 5;
      },
      "min_new_tokens");
  bad([](auto& c) { c.max_length = 0; }, "max_length");
  bad([](auto& c) { c.no_repeat_ngram_size = -1; }, "no_repeat_ngram_size");
  bad([](auto& c) { c.min_new_tokens = -1; }, "min_new_tokens");
  bad([](auto& c) { c.temperature = std::numeric_limits<double>::infinity(); }, "temperature");
  bad([](auto& c) { c.temperature = std::numeric_limits<double>::quiet_NaN(); }, "temperature");
  bad([](auto& c) { c.top_p = std::numeric_limits<double>::quiet_NaN(); }, "top_p");
  bad([](auto& c) { c.min_p = -0.1; }, "min_p");
  bad([](auto& c) { c.repetition_penalty = std::numeric_limits<double>::infinity(); }, "repetition_penalty");
  bad([](auto& c) { c.presence_penalty = -2.5; }, "presence_penalty");
  bad([](auto& c) { c.frequency_penalty = 2.5; }, "frequency_penalty");
  bad([](auto& c) { c.frequency_penalty = std::numeric_limits<double>::quiet_NaN(); }, "frequency_penalty");
  bad([](auto& c) { c.eos_token_ids = {2, -1}; }, "eos_token_ids");
  bad([](auto& c) { c.stop_token_ids = {-5}; }, "stop_token_ids");
  EXPECT_NO_THROW(GenerationConfig{}.validate());
}

TEST(GenerationConfig, NewTokenLimit) {
  GenerationConfig c;
  EXPECT_EQ(c.new_token_limit(10, 100), 90);  // to the end of the context
  c.max_length = 50;
  EXPECT_EQ(c.new_token_limit(10, 100), 40);
  c.max_new_tokens = 70;  // wins over max_length
  EXPECT_EQ(c.new_token_limit(10, 100), 70);
  EXPECT_EQ(c.new_token_limit(95, 100), 5);
  EXPECT_EQ(c.new_token_limit(120, 100), 0);
}

TEST(GenerationConfig, ModelDefaults) {
  const Json j = Json::parse(R"({"do_sample": true, "temperature": 0.6, "top_p": 0.9, "eos_token_id": [7, 9],
                                 "max_new_tokens": 12})");
  const GenerationConfig c = genai::generation_config_from_model(j, {1});
  EXPECT_TRUE(c.do_sample);
  EXPECT_DOUBLE_EQ(c.temperature, 0.6);
  EXPECT_DOUBLE_EQ(c.top_p, 0.9);
  EXPECT_EQ(c.eos_token_ids, (std::set<std::int32_t>{7, 9}));
  EXPECT_EQ(c.max_new_tokens, 12);
  EXPECT_EQ(genai::generation_config_from_model(Json::object(), {1}).eos_token_ids, (std::set<std::int32_t>{1}));
  EXPECT_KILN_ERROR(genai::generation_config_from_model(Json::parse(R"({"top_k": "x"})"), {}), "generation_config.json",
                    "top_k");
}

}  // namespace
}  // namespace kiln
