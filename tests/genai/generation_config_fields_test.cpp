// Oracle: the documented ranges and contradictions of the beam-search, multi-sequence,
// speculative, stop-string and logprob fields: each bad combination is rejected with a message
// naming the field; the model defaults read from generation_config.json carry them over.
#include <gtest/gtest.h>

#include "genai/generation_defaults.hpp"
#include "kiln/generation_config.hpp"
#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln {
namespace {

TEST(GenerationConfigFields, RejectsContradictionsNamingTheField) {
  auto bad = [](auto edit, std::initializer_list<const char*> parts) {
    GenerationConfig c;
    edit(c);
    bool thrown = false;
    try {
      c.validate();
    } catch (const Error& e) {
      thrown = true;
      for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
    EXPECT_TRUE(thrown) << *parts.begin();
  };
  bad([](auto& c) { c.num_beams = 0; }, {"num_beams", ">= 1"});
  bad([](auto& c) { c.logit_bias = {{3, 100.5f}}; }, {"logit_bias", "token 3", "[-100, 100]"});
  bad([](auto& c) { c.logit_bias = {{-1, 1.0f}}; }, {"logit_bias", "token -1"});
  bad(
      [](auto& c) {
        c.num_beams = 4;
        c.do_sample = true;
      },
      {"num_beams", "do_sample"});
  bad(
      [](auto& c) {
        c.num_beams = 2;
        c.num_return_sequences = 3;
      },
      {"num_return_sequences", "exceeds num_beams"});
  bad([](auto& c) { c.num_return_sequences = 2; }, {"num_return_sequences", "greedy"});
  bad([](auto& c) { c.num_return_sequences = 0; }, {"num_return_sequences"});
  bad([](auto& c) { c.num_beams = 257; }, {"num_beams", "256"});
  bad(
      [](auto& c) {
        c.do_sample = true;
        c.num_return_sequences = 1000;
      },
      {"num_return_sequences", "256"});
  bad([](auto& c) { c.stop_strings = {""}; }, {"stop_strings", "empty"});
  bad([](auto& c) { c.logprobs = -1; }, {"logprobs"});
  bad([](auto& c) { c.logprobs = 21; }, {"logprobs", "20"});
  bad([](auto& c) { c.num_assistant_tokens = -1; }, {"num_assistant_tokens"});
  bad([](auto& c) { c.num_assistant_tokens = 17; }, {"num_assistant_tokens", "16"});
  bad([](auto& c) { c.assistant_confidence_threshold = 1.0; }, {"assistant_confidence_threshold"});
  bad(
      [](auto& c) {
        c.num_assistant_tokens = 3;
        c.assistant_confidence_threshold = 0.5;
      },
      {"assistant_confidence_threshold", "num_assistant_tokens"});
  bad([](auto& c) { c.max_ngram_size = -2; }, {"max_ngram_size"});
  bad(
      [](auto& c) {
        c.max_ngram_size = 3;
        c.assistant_confidence_threshold = 0.2;
      },
      {"assistant_confidence_threshold", "prompt lookup"});
  bad(
      [](auto& c) {
        c.num_assistant_tokens = 4;
        c.num_beams = 2;
      },
      {"num_beams", "speculative"});
  bad(
      [](auto& c) {
        c.max_ngram_size = 2;
        c.do_sample = true;
        c.num_return_sequences = 2;
      },
      {"num_return_sequences", "speculative"});
  bad(
      [](auto& c) {
        c.length_penalty = std::numeric_limits<double>::infinity();
        c.num_beams = 2;
      },
      {"length_penalty"});

  GenerationConfig ok;
  ok.num_beams = 4;
  ok.num_return_sequences = 4;
  ok.length_penalty = -1.0;
  EXPECT_NO_THROW(ok.validate());
  ok = {};
  ok.do_sample = true;
  ok.num_return_sequences = 5;
  ok.stop_strings = {"\n\n", "User:"};
  ok.logprobs = 5;
  EXPECT_NO_THROW(ok.validate());
}

TEST(GenerationConfigFields, ModelDefaultsCarryBeamAndStopSettings) {
  const Json j = Json::parse(R"({"num_beams": 4, "length_penalty": 0.6, "early_stopping": "never",
                                 "num_return_sequences": 2, "stop_strings": ["###"]})");
  const GenerationConfig c = genai::generation_config_from_model(j, {1});
  EXPECT_EQ(c.num_beams, 4);
  EXPECT_DOUBLE_EQ(c.length_penalty, 0.6);
  EXPECT_EQ(c.early_stopping, StopCriteria::NEVER);
  EXPECT_EQ(c.num_return_sequences, 2);
  EXPECT_EQ(c.stop_strings, std::set<std::string>{"###"});
  EXPECT_EQ(genai::generation_config_from_model(Json::parse(R"({"early_stopping": true})"), {}).early_stopping,
            StopCriteria::EARLY);
  EXPECT_KILN_ERROR(genai::generation_config_from_model(Json::parse(R"({"early_stopping": "soon"})"), {}),
                    "generation_config.json", "early_stopping");
  EXPECT_KILN_ERROR(genai::generation_config_from_model(Json::parse(R"({"stop_strings": [1]})"), {}), "stop_strings");
  EXPECT_EQ(parse_stop_criteria("false"), StopCriteria::HEURISTIC);
  EXPECT_KILN_ERROR(parse_stop_criteria("maybe"), "early_stopping", "never");
}

}  // namespace
}  // namespace kiln
