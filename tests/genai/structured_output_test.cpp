// Structured output through LLMPipeline on a golden checkpoint: the text parses (nlohmann's
// parser and std::regex are the oracles, independent of the grammar engine), speculative decoding
// (prompt lookup and a draft model) keeps the constrained greedy output, n samples each follow
// the grammar, and unsupported combinations or schemas are errors naming them. Masks against
// xgrammar's: tests/grammar/mask_golden_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "kiln/llm_pipeline.hpp"
#include "support/test_support.hpp"
#include "test_models.hpp"
#include "util/json.hpp"

namespace kiln {
namespace {

constexpr const char* kSchema = R"({"type": "object", "properties": {
    "ok": {"type": "boolean"}, "color": {"enum": ["red", "green", "blue"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "maxItems": 2}},
    "required": ["ok", "color", "tags"]})";

GenerationConfig constrained(StructuredOutputConfig s, std::int64_t n = 400) {
  GenerationConfig c = testing::greedy_config(n);
  c.ignore_eos = false;
  c.structured_output_config = std::move(s);
  return c;
}

StructuredOutputConfig schema(const char* text) {
  StructuredOutputConfig s;
  s.json_schema = text;
  return s;
}

void expect_valid(const std::string& text) {
  const Json value = Json::parse(text);  // throws when it is not JSON
  ASSERT_TRUE(value.is_object()) << text;
  EXPECT_TRUE(value.at("ok").is_boolean()) << text;
  EXPECT_TRUE(value.at("color") == "red" || value.at("color") == "green" || value.at("color") == "blue") << text;
  ASSERT_TRUE(value.at("tags").is_array()) << text;
  EXPECT_LE(value.at("tags").size(), 2u) << text;
  for (const Json& tag : value.at("tags")) {
    const std::string bytes = tag.get<std::string>();  // maxLength counts characters, not bytes
    EXPECT_LE(std::count_if(bytes.begin(), bytes.end(), [](char c) { return (c & 0xC0) != 0x80; }), 4) << text;
  }
  EXPECT_EQ(value.size(), 3u) << text;
}

TEST(StructuredOutput, GreedyOutputIsValidJsonAndEndsThere) {
  LLMPipeline pipe(testing::checkpoint_dir("llama3_tiny"), "CPU");
  for (const char* prompt : {"Hello world", "The quick brown fox", "{\"ok\": "}) {
    const DecodedResults r = pipe.generate(prompt, constrained(schema(kSchema)));
    expect_valid(r.texts[0]);
  }
}

TEST(StructuredOutput, SpeculativeDecodingKeepsTheConstrainedGreedyOutput) {
  PipelineProperties with_draft;
  with_draft.draft = draft_model(testing::draft_dir());
  with_draft.adaptive_speculation = false;
  LLMPipeline pipe(testing::checkpoint_dir("llama3_tiny"), "CPU", with_draft);
  const GenerationConfig plain = constrained(schema(kSchema));
  GenerationConfig lookup = plain;
  lookup.max_ngram_size = 3;
  lookup.num_assistant_tokens = 4;
  GenerationConfig draft = plain;
  draft.num_assistant_tokens = 4;
  for (const char* prompt : {"Hello world", "{\"ok\": true, \"color\": \"red\", \"tags\": [\"a\"]} again: "}) {
    const std::string expected = pipe.generate(prompt, plain).texts[0];
    expect_valid(expected);
    EXPECT_EQ(pipe.generate(prompt, lookup).texts[0], expected) << prompt;
    EXPECT_EQ(pipe.generate(prompt, draft).texts[0], expected) << prompt;
  }
}

TEST(StructuredOutput, EverySampleFollowsTheRegex) {
  LLMPipeline pipe(testing::checkpoint_dir("llama3_tiny"), "CPU");
  StructuredOutputConfig s;
  s.regex = R"(\d{3}-[A-Z]{2}( (cat|dog)s?)?)";
  GenerationConfig c = constrained(s, 32);
  c.do_sample = true;
  c.num_return_sequences = 4;
  c.rng_seed = 7;
  const DecodedResults r = pipe.generate("Code:", c);
  ASSERT_EQ(r.texts.size(), 4u);
  for (const std::string& text : r.texts) EXPECT_TRUE(std::regex_match(text, std::regex(*s.regex))) << text;
}

TEST(StructuredOutput, ChoiceAndGrammar) {
  LLMPipeline pipe(testing::checkpoint_dir("llama3_tiny"), "CPU");
  StructuredOutputConfig choice;
  choice.choice = {"alpha", "beta", "alphabet"};
  const std::string picked = pipe.generate("Pick:", constrained(choice)).texts[0];
  EXPECT_TRUE(picked == "alpha" || picked == "beta" || picked == "alphabet") << picked;
  StructuredOutputConfig gbnf;
  gbnf.grammar = "root ::= \"(\" num (\"+\" num){0,3} \")\"\nnum ::= [1-9] [0-9]?\n";
  const std::string sum = pipe.generate("Sum:", constrained(gbnf)).texts[0];
  EXPECT_TRUE(std::regex_match(sum, std::regex(R"(\([1-9][0-9]?(\+[1-9][0-9]?){0,3}\))"))) << sum;
}

TEST(StructuredOutput, ErrorsNameTheProblem) {
  LLMPipeline pipe(testing::checkpoint_dir("llama3_tiny"), "CPU");
  EXPECT_KILN_ERROR(pipe.generate("x", constrained(schema(R"({"type": "integer", "multipleOf": 3})"))),
                    "keyword 'multipleOf' at # is not supported");
  GenerationConfig beams = constrained(schema(kSchema));
  beams.num_beams = 2;
  EXPECT_KILN_ERROR(pipe.generate("x", beams), "beam search");
  StructuredOutputConfig two;
  two.regex = "a";
  two.json_object = true;
  EXPECT_KILN_ERROR(pipe.generate("x", constrained(two)), "exactly one");
  StructuredOutputConfig bad_regex;
  bad_regex.regex = "(a";
  EXPECT_KILN_ERROR(pipe.generate("x", constrained(bad_regex)), "regex");
}

}  // namespace
}  // namespace kiln
