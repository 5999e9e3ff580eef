// The tool-call parsers. Oracles: the formats as the models' own published chat templates write
// an assistant's tool calls ($KILN_EXTERNAL_FIXTURES: Hermes 2 Pro / 3, Qwen 2.5, Llama 3.1 -
// 3.3, Mistral Nemo), parsed back to the calls that were rendered; JSON equality of the
// arguments by nlohmann::json; and streaming must not matter: text fed one character at a time
// gives what the whole text gives.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "server/tool_call_parser.hpp"
#include "support/test_support.hpp"
#include "tokenizer/chat_template.hpp"
#include "util/file_io.hpp"

namespace kiln::server {
namespace {

using json = nlohmann::json;

struct Call {
  std::string id;
  std::string name;
  std::string arguments;
};

struct Parsed {
  std::string content;
  std::vector<Call> calls;
};

void accumulate(const ParsedOutput& out, Parsed& parsed) {
  parsed.content += out.content;
  for (const ToolCallDelta& d : out.calls) {
    if (!d.name.empty()) {
      ASSERT_EQ(d.index, parsed.calls.size()) << "a call's first delta names it";
      ASSERT_FALSE(d.id.empty());
      parsed.calls.push_back({d.id, d.name, {}});
    }
    ASSERT_EQ(d.index + 1, parsed.calls.size()) << "deltas continue the latest call";
    parsed.calls.back().arguments += d.arguments;
  }
}

// The text in pieces of `piece_size` characters (0: whole).
Parsed parse(ToolCallFormat format, const std::string& text, std::size_t piece_size = 0, bool single_call = false) {
  auto parser = make_tool_call_parser(format, single_call);
  Parsed parsed;
  const std::size_t step = piece_size == 0 ? std::max<std::size_t>(text.size(), 1) : piece_size;
  for (std::size_t at = 0; at < text.size(); at += step) accumulate(parser->push(text.substr(at, step)), parsed);
  accumulate(parser->finish(), parsed);
  return parsed;
}

// Whole, one character at a time and three at a time agree; returns the whole-text result.
Parsed parse_every_way(ToolCallFormat format, const std::string& text, bool single_call = false) {
  const Parsed whole = parse(format, text, 0, single_call);
  for (std::size_t piece : {1, 3}) {
    const Parsed split = parse(format, text, piece, single_call);
    EXPECT_EQ(split.content, whole.content) << "pieces of " << piece;
    EXPECT_EQ(split.calls.size(), whole.calls.size()) << "pieces of " << piece;
    for (std::size_t i = 0; i < std::min(split.calls.size(), whole.calls.size()); ++i) {
      EXPECT_EQ(split.calls[i].name, whole.calls[i].name);
      EXPECT_EQ(split.calls[i].arguments, whole.calls[i].arguments);
    }
  }
  return whole;
}

const json kTricky = {
    {"city", "Paris"}, {"note", "braces {} and a literal </tool_call> ; ] inside"}, {"n", {1, {{"x", nullptr}}}}};

TEST(ToolCallParser, HermesCallsAfterContentWithTrickyArguments) {
  const std::string text = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kTricky.dump() +
                           "}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  const Parsed p = parse_every_way(ToolCallFormat::kHermes, text);
  EXPECT_EQ(p.content, "Let me check.\n");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(p.calls[0].arguments), kTricky);
  EXPECT_EQ(p.calls[1].name, "get_time");
  EXPECT_EQ(json::parse(p.calls[1].arguments), json::object());
  EXPECT_NE(p.calls[0].id, p.calls[1].id);
  EXPECT_TRUE(p.calls[0].id.starts_with("call_"));
}

TEST(ToolCallParser, WhitespaceAfterTextThatFollowsACallIsKept) {
  // Whitespace right after a call is held back (it may only separate calls); held back after
  // text too, a last "\n" streamed on its own was lost while the whole text kept it.
  const Parsed hermes =
      parse_every_way(ToolCallFormat::kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\nDone. \n");
  EXPECT_EQ(hermes.content, "\nDone. \n");  // the gap is kept too: text followed it
  EXPECT_EQ(hermes.calls.size(), 1u);
  const Parsed llama = parse_every_way(ToolCallFormat::kLlama3Json, "{\"name\": \"f\", \"parameters\": {}} ok\n");
  EXPECT_EQ(llama.content, "ok\n");
  EXPECT_EQ(llama.calls.size(), 1u);
}

TEST(ToolCallParser, PlainTextAndNearMissesAreContent) {
  for (const std::string& text : {std::string("just words < tool_call > {\"name\": 1}"), std::string("<tool_call"),
                                  std::string("a <tool_call>not json</tool_call> b"),
                                  std::string("<tool_call>{\"arguments\": {}}</tool_call>")}) {
    const Parsed p = parse_every_way(ToolCallFormat::kHermes, text);
    EXPECT_EQ(p.content, text);
    EXPECT_TRUE(p.calls.empty()) << text;
  }
}

TEST(ToolCallParser, ArgumentsAsAStringOrBeforeTheNameOrMissing) {
  const Parsed string_args = parse_every_way(ToolCallFormat::kHermes,
                                             R"(<tool_call>{"name": "f", "arguments": "{\"a\": \"}\"}"}</tool_call>)");
  ASSERT_EQ(string_args.calls.size(), 1u);
  EXPECT_EQ(string_args.calls[0].arguments, R"({"a": "}"})");
  const Parsed early =
      parse_every_way(ToolCallFormat::kHermes, R"(<tool_call>{"arguments": {"a": [1, 2]}, "name": "f"})");
  ASSERT_EQ(early.calls.size(), 1u);
  EXPECT_EQ(early.calls[0].name, "f");
  EXPECT_EQ(early.calls[0].arguments, R"({"a": [1, 2]})");
  const Parsed none = parse_every_way(ToolCallFormat::kHermes, R"(<tool_call>{"name": "f", "id": 7}</tool_call>)");
  ASSERT_EQ(none.calls.size(), 1u);
  EXPECT_EQ(none.calls[0].arguments, "{}");
}

TEST(ToolCallParser, ACallCutShortKeepsWhatItHad) {
  const Parsed p = parse_every_way(ToolCallFormat::kHermes, R"(<tool_call>{"name": "f", "arguments": {"a": "x)");
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].arguments, R"({"a": "x)");
  EXPECT_EQ(p.content, "");
}

TEST(ToolCallParser, SingleCallDropsEverythingAfterTheFirst) {
  const std::string text =
      R"(<tool_call>{"name": "f", "arguments": {}}</tool_call> and <tool_call>{"name": "g"}</tool_call>)";
  const Parsed p = parse_every_way(ToolCallFormat::kHermes, text, /*single_call=*/true);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].name, "f");
  EXPECT_EQ(p.content, "");
}

TEST(ToolCallParser, Llama3JsonCallsOnlyWhenTheOutputStartsWithOne) {
  const std::string text = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": " + kTricky.dump() +
                           "}; {\"name\": \"get_time\", \"parameters\": {}}";
  const Parsed p = parse_every_way(ToolCallFormat::kLlama3Json, text);
  EXPECT_EQ(p.content, "");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(json::parse(p.calls[0].arguments), kTricky);
  EXPECT_EQ(p.calls[1].name, "get_time");
  const std::string prose = "The answer is {\"name\": \"f\"}";
  EXPECT_EQ(parse_every_way(ToolCallFormat::kLlama3Json, prose).content, prose);
  const std::string not_a_call = "  {\"value\": 1}";
  const Parsed p2 = parse_every_way(ToolCallFormat::kLlama3Json, not_a_call);
  EXPECT_EQ(p2.content, not_a_call);
  EXPECT_TRUE(p2.calls.empty());
}

TEST(ToolCallParser, MistralArrayAndNamedForms) {
  const std::string array = "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": " + kTricky.dump() +
                            ", \"id\": \"abcDEF123\"}, {\"name\": \"get_time\", \"arguments\": {}}]";
  const Parsed a = parse_every_way(ToolCallFormat::kMistral, array);
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(json::parse(a.calls[0].arguments), kTricky);
  EXPECT_EQ(a.calls[0].id.size(), 9u);
  const std::string named = "[TOOL_CALLS]get_weather[ARGS]" + kTricky.dump() + "[TOOL_CALLS]get_time[ARGS]{}";
  const Parsed n = parse_every_way(ToolCallFormat::kMistral, named);
  ASSERT_EQ(n.calls.size(), 2u);
  EXPECT_EQ(n.calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(n.calls[0].arguments), kTricky);
  EXPECT_EQ(n.calls[1].arguments, "{}");
  EXPECT_EQ(n.content, "");
}

TEST(ToolCallParser, PrefillStartsACallTheModelFinishes) {
  const std::map<ToolCallFormat, std::string> endings = {{ToolCallFormat::kHermes, "}\n</tool_call>"},
                                                         {ToolCallFormat::kLlama3Json, "}"},
                                                         {ToolCallFormat::kMistral, "}]"}};
  for (const auto& [format, ending] : endings) {
    const Parsed named = parse_every_way(format, tool_call_prefill(format, "get_time") + "{\"tz\": \"UTC\"}" + ending);
    ASSERT_EQ(named.calls.size(), 1u);
    EXPECT_EQ(named.calls[0].name, "get_time");
    EXPECT_EQ(named.calls[0].arguments, R"({"tz": "UTC"})");
    const Parsed any = parse_every_way(format, tool_call_prefill(format, "") + "f\", \"arguments\": {}" + ending);
    ASSERT_EQ(any.calls.size(), 1u);
    EXPECT_EQ(any.calls[0].name, "f");
  }
}

// Random texts built from the formats' own fragments: whatever the text, the parsers must not
// fail, pieces must not matter, and a Hermes text in which no call parsed comes back unchanged.
TEST(ToolCallParser, RandomFragmentsParseTheSameInPieces) {
  const std::vector<std::string> fragments = {"<tool_call>",
                                              "</tool_call>",
                                              "[TOOL_CALLS]",
                                              "[ARGS]",
                                              "<|python_tag|>",
                                              "{",
                                              "}",
                                              "[",
                                              "]",
                                              "\"",
                                              "\\",
                                              "\"name\"",
                                              "\"arguments\"",
                                              "\"parameters\"",
                                              ":",
                                              ",",
                                              ";",
                                              " ",
                                              "\n",
                                              "f",
                                              "7",
                                              "null",
                                              "é"};
  std::mt19937 rng(20261205);
  std::uniform_int_distribution<std::size_t> pick(0, fragments.size() - 1), length(0, 40);
  for (int round = 0; round < 600; ++round) {
    std::string text;
    for (std::size_t n = length(rng); n > 0; --n) text += fragments[pick(rng)];
    for (ToolCallFormat format : {ToolCallFormat::kHermes, ToolCallFormat::kLlama3Json, ToolCallFormat::kMistral}) {
      const Parsed p = parse_every_way(format, text, /*single_call=*/round % 2 == 1);
      for (const Call& call : p.calls) {
        EXPECT_FALSE(call.name.empty()) << text;
      }
      if (format == ToolCallFormat::kHermes && p.calls.empty()) {
        EXPECT_EQ(p.content, text);
      }
    }
  }
}

TEST(ToolCallParser, FormatNames) {
  EXPECT_EQ(tool_call_format("hermes"), ToolCallFormat::kHermes);
  EXPECT_EQ(tool_call_format("llama3_json"), ToolCallFormat::kLlama3Json);
  EXPECT_EQ(tool_call_format("mistral"), ToolCallFormat::kMistral);
  EXPECT_FALSE(tool_call_format("pythonic"));
}

// The assistant turn a published template renders for `calls`, parsed back.
struct TemplateCase {
  const char* template_file;
  ToolCallFormat format;
  bool several_calls;  // Llama 3.x templates refuse more than one call per turn
};

void PrintTo(const TemplateCase& c, std::ostream* os) { *os << c.template_file; }

class PublishedTemplate : public ::testing::TestWithParam<TemplateCase> {};

TEST_P(PublishedTemplate, ParsesTheCallsItRenders) {
  const auto fixtures = testing::external_fixtures_dir();
  if (!fixtures) GTEST_SKIP() << "KILN_EXTERNAL_FIXTURES is not set: published chat templates skipped";
  const TemplateCase& c = GetParam();
  const auto path = *fixtures / "chat_templates" / c.template_file;
  const ChatTemplate chat_template(read_file(path), {{"bos_token", "<s>"}, {"eos_token", "</s>"}});
  nlohmann::ordered_json calls = nlohmann::ordered_json::array();
  calls.push_back({{"type", "function"},
                   {"id", "abcDEF123"},
                   {"function", {{"name", "get_weather"}, {"arguments", nlohmann::ordered_json(kTricky)}}}});
  if (c.several_calls) {
    calls.push_back({{"type", "function"},
                     {"id", "ghiJKL456"},
                     {"function", {{"name", "get_time"}, {"arguments", nlohmann::ordered_json::object()}}}});
  }
  const nlohmann::ordered_json user = {{"role", "user"}, {"content", "Weather in Paris?"}};
  const nlohmann::ordered_json assistant = {{"role", "assistant"}, {"content", ""}, {"tool_calls", calls}};
  ChatTemplateOptions prompt_options;
  prompt_options.add_generation_prompt = true;
  prompt_options.tools = nlohmann::ordered_json::array();  // Hermes' templates need them
  for (const char* name : {"get_weather", "get_time"}) {
    prompt_options.tools.push_back(
        {{"type", "function"},
         {"function",
          {{"name", name},
           {"description", "d"},
           {"parameters", {{"type", "object"}, {"properties", nlohmann::ordered_json::object()}}}}}});
  }
  prompt_options.local_time = [] { return std::tm{}; };
  ChatTemplateOptions turn_options = prompt_options;
  turn_options.add_generation_prompt = false;
  const std::string prompt = chat_template.apply(nlohmann::ordered_json::array({user}), prompt_options);
  const std::string full = chat_template.apply(nlohmann::ordered_json::array({user, assistant}), turn_options);
  ASSERT_TRUE(full.starts_with(prompt)) << full;
  std::string turn = full.substr(prompt.size());
  for (const char* end_of_turn : {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "</s>"}) {
    turn = turn.substr(0, turn.find(end_of_turn));
  }
  const Parsed p = parse_every_way(c.format, turn);
  ASSERT_EQ(p.calls.size(), calls.size()) << turn;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(p.calls[i].name, calls[i]["function"]["name"].get<std::string>()) << turn;
    EXPECT_EQ(json::parse(p.calls[i].arguments), json(calls[i]["function"]["arguments"])) << turn;
  }
  EXPECT_EQ(p.content, "") << turn;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, PublishedTemplate,
    ::testing::Values(TemplateCase{"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", ToolCallFormat::kHermes,
                                   true},
                      TemplateCase{"NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", ToolCallFormat::kHermes, true},
                      TemplateCase{"Qwen-Qwen2.5-7B-Instruct.jinja", ToolCallFormat::kHermes, true},
                      TemplateCase{"meta-llama-Llama-3.1-8B-Instruct.jinja", ToolCallFormat::kLlama3Json, false},
                      TemplateCase{"meta-llama-Llama-3.3-70B-Instruct.jinja", ToolCallFormat::kLlama3Json, false},
                      TemplateCase{"mistralai-Mistral-Nemo-Instruct-2407.jinja", ToolCallFormat::kMistral, true}),
    [](const ::testing::TestParamInfo<TemplateCase>& info) {
      std::string name = info.param.template_file;
      name = name.substr(0, name.find(".jinja"));
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace kiln::server
