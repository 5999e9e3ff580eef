// kiln::ChatTemplate against transformers. Oracles: the tokenizer fixtures' chat_golden.jsonl
// (rendered by Python Jinja2 3.1.6 in transformers' environment, cross-checked with
// @huggingface/jinja; see each SOURCE.md) for the rendered prompt and its token ids, and
// transformers' documented context rules for the rest.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/tokenizer.hpp"
#include "support/test_support.hpp"
#include "tokenizer/chat_template.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "util/file_io.hpp"

namespace kiln {
namespace {

using OrderedJson = nlohmann::ordered_json;

class ChatTemplateFixture : public ::testing::TestWithParam<std::string> {};

// Oracle: every record's `rendered` string and `ids` = encode(rendered, add_special_tokens=False).
TEST_P(ChatTemplateFixture, MatchesTransformersGoldens) {
  const auto source = testing::tokenizer_fixture(GetParam());
  if (!source) GTEST_SKIP() << GetParam() << " fixture absent (KILN_EXTERNAL_FIXTURES not set)";
  testing::TempDir scratch;
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::usable_tokenizer_dir(*source, scratch));
  const ChatTemplate chat_template(tokenizer);
  const auto lines = testing::read_lines(*source / "chat_golden.jsonl");
  ASSERT_GE(lines.size(), 8u);
  for (const std::string& line : lines) {
    const OrderedJson record = OrderedJson::parse(line);
    ChatTemplateOptions options;
    options.add_generation_prompt = record.at("add_generation_prompt").get<bool>();
    if (record.contains("template_kwargs")) options.variables = record.at("template_kwargs");
    const std::string rendered = chat_template.apply(record.at("messages"), options);
    const std::string id = record.at("id").get<std::string>();
    EXPECT_EQ(rendered, record.at("rendered").get<std::string>()) << GetParam() << " / " << id;
    EXPECT_EQ(tokenizer.encode(rendered, false), record.at("ids").get<std::vector<int32_t>>())
        << GetParam() << " / " << id;
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, ChatTemplateFixture, ::testing::Values("llama3", "llama3_1", "qwen3"));

// Oracle: transformers refuses to render without a template.
TEST(ChatTemplate, TokenizerWithoutTemplateIsAnError) {
  const auto source = testing::tokenizer_fixture("mistral7b");
  ASSERT_TRUE(source.has_value());
  testing::TempDir scratch;
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::usable_tokenizer_dir(*source, scratch));
  EXPECT_KILN_ERROR(ChatTemplate{tokenizer}, "no chat template");
}

// Oracle: transformers' context: tools and documents are None unless given, special tokens are
// variables, extra kwargs override them, and add_generation_prompt is a bool.
TEST(ChatTemplate, ContextFollowsTransformers) {
  const ChatTemplate tmpl(
      "{{ bos_token }}|{{ eos_token }}|{{ tools is none }}|{{ documents is none }}|"
      "{{ add_generation_prompt }}|{{ date_string is defined }}|{{ messages|length }}",
      OrderedJson{{"bos_token", "<s>"}, {"eos_token", "</s>"}});
  const OrderedJson messages = OrderedJson::parse(R"([{"role": "user", "content": "hi"}])");
  EXPECT_EQ(tmpl.apply(messages), "<s>|</s>|True|True|False|False|1");
  ChatTemplateOptions options;
  options.add_generation_prompt = true;
  options.tools = OrderedJson::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  options.variables = OrderedJson{{"eos_token", "<end>"}, {"date_string", "1 Jan 2025"}};
  EXPECT_EQ(tmpl.apply(messages, options), "<s>|<end>|False|True|True|True|1");
}

// Oracle: tool schemas keep their key order through tojson, as Python dicts do.
TEST(ChatTemplate, ToolSchemasKeepKeyOrder) {
  const ChatTemplate tmpl("{% for t in tools %}{{ t|tojson }}{% endfor %}", nullptr);
  ChatTemplateOptions options;
  options.tools =
      OrderedJson::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"z": 1, "a": 2}}}])");
  EXPECT_EQ(tmpl.apply(OrderedJson::array(), options),
            R"({"type": "function", "function": {"name": "f", "parameters": {"z": 1, "a": 2}}})");
}

// Oracle: malformed conversations are errors naming what is wrong, not crashes.
TEST(ChatTemplate, BadInputIsAnError) {
  const ChatTemplate tmpl("{{ messages[0].content }}", nullptr);
  EXPECT_KILN_ERROR(tmpl.apply(OrderedJson::object()), "messages must be a JSON array");
  EXPECT_KILN_ERROR(tmpl.apply(OrderedJson::parse(R"(["hi"])")), "chat message 0", "JSON object");
  ChatTemplateOptions options;
  options.tools = OrderedJson::parse(R"({"name": "f"})");
  EXPECT_KILN_ERROR(tmpl.apply(OrderedJson::array(), options), "tools must be a JSON array");
  options.tools = nullptr;
  options.variables = OrderedJson{{"messages", 1}};
  EXPECT_KILN_ERROR(tmpl.apply(OrderedJson::array(), options), "'messages'");
  EXPECT_KILN_ERROR(ChatTemplate("{% if %}", nullptr, "tokenizer_config.json"), "tokenizer_config.json:1:7",
                    "TemplateSyntaxError");
  const ChatTemplate strict("{{ raise_exception('Only user and assistant roles are supported') }}", nullptr);
  EXPECT_KILN_ERROR(strict.apply(OrderedJson::array()), "TemplateError: Only user and assistant roles are supported");
}

// Oracle: `kiln template` prints exactly what ChatTemplate renders for the same inputs.
TEST(ChatTemplateCli, TemplateCommandPrintsThePrompt) {
  const auto source = testing::tokenizer_fixture("qwen3");
  ASSERT_TRUE(source.has_value());
  testing::TempDir scratch;
  const auto dir = testing::usable_tokenizer_dir(*source, scratch);
  const OrderedJson messages =
      OrderedJson::parse(R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi!"}])");
  write_file_atomic(scratch.path() / "messages.json", messages.dump());
  ChatTemplateOptions options;
  options.add_generation_prompt = true;
  options.variables = OrderedJson{{"enable_thinking", false}};
  const std::string expected = ChatTemplate(Tokenizer::from_dir(dir)).apply(messages, options);
  EXPECT_NE(expected.find("<think>\n\n</think>"), std::string::npos);
  const auto result =
      testing::run_kiln({"template", "--model", dir.string(), "--messages", (scratch.path() / "messages.json").string(),
                         "--add-generation-prompt", "--var", "enable_thinking=false"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, expected);
  const auto missing =
      testing::run_kiln({"template", "--model", dir.string(), "--messages", (scratch.path() / "nope.json").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace kiln
