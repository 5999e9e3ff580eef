// Oracle: OpenAI's API reference for the request fields (types, ranges, defaults: temperature 1,
// completions' max_tokens 16) and vLLM's extras; every rejection must be a 400 naming the field.
#include "server/openai_request.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/api_error.hpp"

namespace kiln::server {
namespace {

using json = nlohmann::json;

CompletionRequest chat(const json& extra, RequestLimits limits = {}) {
  json body = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  body.update(extra);
  return parse_completion_request(Endpoint::kChat, body, GenerationConfig{}, limits);
}

CompletionRequest completion(const json& extra) {
  json body = {{"prompt", "Once"}};
  body.update(extra);
  return parse_completion_request(Endpoint::kCompletions, body, GenerationConfig{}, {});
}

// The ApiError a call throws: its status and param, and that its message names `param`.
template <typename F>
void expect_bad(F call, const std::string& param, int status = 400) {
  try {
    call();
    ADD_FAILURE() << "no error for " << param;
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_EQ(e.param(), param) << e.what();
    EXPECT_NE(std::string(e.what()).find(param), std::string::npos) << e.what();
  }
}

TEST(OpenAiRequest, ChatDefaultsFollowOpenAi) {
  const CompletionRequest r = chat(json::object());
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0]["role"], "user");
  EXPECT_TRUE(r.config.do_sample);  // temperature defaults to 1
  EXPECT_DOUBLE_EQ(r.config.temperature, 1.0);
  EXPECT_FALSE(r.config.max_new_tokens.has_value());  // chat runs to the end of the context
  EXPECT_TRUE(r.config.apply_chat_template);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.config.logprobs, 0);
}

TEST(OpenAiRequest, ChatFieldsMapOntoTheConfig) {
  const CompletionRequest r = chat({{"temperature", 0},
                                    {"max_completion_tokens", 7},
                                    {"max_tokens", 99},
                                    {"n", 1},
                                    {"stop", {"a", "b"}},
                                    {"seed", 42},
                                    {"presence_penalty", 0.5},
                                    {"frequency_penalty", -0.5},
                                    {"logit_bias", {{"12", -100}, {"3", 2.5}}},
                                    {"top_k", 5},
                                    {"min_p", 0.1},
                                    {"repetition_penalty", 1.2},
                                    {"ignore_eos", true},
                                    {"include_stop_str_in_output", true},
                                    {"logprobs", true},
                                    {"top_logprobs", 3},
                                    {"stream", true},
                                    {"stream_options", {{"include_usage", true}}}});
  const GenerationConfig& c = r.config;
  EXPECT_FALSE(c.do_sample);
  EXPECT_EQ(c.max_new_tokens, 7);  // max_completion_tokens wins
  EXPECT_EQ(c.stop_strings, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(c.rng_seed, 42u);
  EXPECT_DOUBLE_EQ(c.presence_penalty, 0.5);
  EXPECT_DOUBLE_EQ(c.frequency_penalty, -0.5);
  EXPECT_EQ(c.logit_bias, (std::map<std::int32_t, float>{{3, 2.5f}, {12, -100.0f}}));
  EXPECT_EQ(c.top_k, 5);
  EXPECT_DOUBLE_EQ(c.min_p, 0.1);
  EXPECT_DOUBLE_EQ(c.repetition_penalty, 1.2);
  EXPECT_TRUE(c.ignore_eos);
  EXPECT_TRUE(c.include_stop_str_in_output);
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 3);
  EXPECT_EQ(c.logprobs, 3);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
}

TEST(OpenAiRequest, ResponseFormatsAndGuidedFieldsBecomeTheStructuredOutputConfig) {
  const json schema = {{"type", "object"}, {"properties", {{"b", {{"type", "integer"}}}, {"a", {{"type", "null"}}}}}};
  const auto r =
      chat({{"response_format",
             {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}, {"strict", true}}}}}});
  ASSERT_TRUE(r.config.structured_output_config.has_value());
  EXPECT_EQ(r.config.structured_output_config->json_schema, schema.dump());
  EXPECT_TRUE(chat({{"response_format", {{"type", "json_object"}}}}).config.structured_output_config->json_object);
  EXPECT_FALSE(chat({{"response_format", {{"type", "text"}}}}).config.structured_output_config.has_value());
  EXPECT_EQ(completion({{"guided_regex", "[0-9]+"}}).config.structured_output_config->regex, "[0-9]+");
  EXPECT_EQ(completion({{"guided_choice", {"x", "y"}}}).config.structured_output_config->choice,
            (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(completion({{"guided_grammar", "root ::= \"a\""}}).config.structured_output_config->grammar,
            "root ::= \"a\"");
  EXPECT_EQ(completion({{"guided_json", {{"type", "string"}}}}).config.structured_output_config->json_schema,
            R"({"type":"string"})");
}

TEST(OpenAiRequest, TemperaturesTooSmallToDivideByAreGreedy) {
  EXPECT_FALSE(chat({{"temperature", 5e-324}}).config.do_sample);
  EXPECT_TRUE(chat({{"temperature", 1e-5}}).config.do_sample);
}

TEST(OpenAiRequest, ContentPartsAndDeveloperRole) {
  const json messages = {
      {{"role", "developer"}, {"content", "be brief"}},
      {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}}}}};
  const CompletionRequest r = chat({{"messages", messages}});
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0]["role"], "system");
  EXPECT_EQ(r.messages[1]["content"], "ab");
}

TEST(OpenAiRequest, LogprobsWithoutAlternativesStillAskTheEngineForOne) {
  const CompletionRequest r = chat({{"logprobs", true}});
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 0);
  EXPECT_EQ(r.config.logprobs, 1);
}

TEST(OpenAiRequest, CompletionPromptsInEveryShape) {
  EXPECT_EQ(completion(json::object()).prompts.size(), 1u);
  EXPECT_EQ(completion(json::object()).config.max_new_tokens, 16);  // OpenAI's default
  EXPECT_FALSE(completion(json::object()).config.apply_chat_template);
  const auto many = completion({{"prompt", {"a", "b"}}}).prompts;
  ASSERT_EQ(many.size(), 2u);
  EXPECT_EQ(std::get<std::string>(many[1]), "b");
  const auto ids = completion({{"prompt", {1, 2, 3}}}).prompts;
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(std::get<std::vector<std::int32_t>>(ids[0]), (std::vector<std::int32_t>{1, 2, 3}));
  const auto nested = completion({{"prompt", {{1, 2}, {3}}}}).prompts;
  ASSERT_EQ(nested.size(), 2u);
  const CompletionRequest r = completion({{"logprobs", 2}, {"echo", true}});
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 2);
  EXPECT_TRUE(r.echo);
}

TEST(OpenAiRequest, BadFieldsAreNamed) {
  expect_bad([] { chat({{"temperature", "hot"}}); }, "temperature");
  expect_bad([] { chat({{"temperature", 2.5}}); }, "temperature");
  expect_bad([] { chat({{"top_p", 0}}); }, "top_p");
  expect_bad([] { chat({{"n", 0}}); }, "n");
  expect_bad([] { chat({{"n", 1.5}}); }, "n");
  expect_bad([] { chat({{"max_tokens", -1}}); }, "max_tokens");
  expect_bad([] { chat({{"max_tokens", 100}}, {.max_tokens = 50}); }, "max_tokens");
  expect_bad([] { chat({{"stop", 3}}); }, "stop");
  expect_bad([] { chat({{"stop", {""}}}); }, "stop[0]");
  expect_bad([] { chat({{"logit_bias", {{"x", 1}}}}); }, "logit_bias.x");
  expect_bad([] { chat({{"logit_bias", {{"012", 1}}}}); }, "logit_bias.012");
  expect_bad([] { chat({{"logit_bias", {{"-1", 1}}}}); }, "logit_bias.-1");
  expect_bad([] { chat({{"logit_bias", {{"99999999999", 1}}}}); }, "logit_bias.99999999999");
  expect_bad([] { chat({{"logit_bias", {{"5", 101}}}}); }, "logit_bias.5");
  expect_bad([] { chat({{"top_logprobs", 2}}); }, "top_logprobs");
  expect_bad([] { chat({{"top_logprobs", 21}, {"logprobs", true}}); }, "top_logprobs");
  expect_bad([] { chat({{"stream_options", 3}}); }, "stream_options");
  expect_bad([] { chat({{"messages", json::array()}}); }, "messages");
  expect_bad([] { chat({{"messages", {{{"role", "robot"}, {"content", "x"}}}}}); }, "messages[0].role");
  expect_bad([] { chat({{"messages", {{{"content", "x"}}}}}); }, "messages[0].role");
  expect_bad([] { chat({{"messages", {{{"role", "user"}, {"content", 5}}}}}); }, "messages[0].content");
  expect_bad([] { chat({{"tools", {{{"type", "function"}}}}}); }, "tools[0].function");
  expect_bad([] { chat({{"response_format", {{"type", "xml"}}}}); }, "response_format.type");
  expect_bad([] { chat({{"response_format", {{"type", "json_schema"}}}}); }, "response_format.json_schema");
  expect_bad([] { chat({{"guided_regex", "a"}, {"guided_choice", {"a"}}}); }, "guided_choice");
  expect_bad([] { chat({{"max_tokens", 0}}); }, "max_tokens");
  expect_bad([] { chat({{"user", true}}); }, "user");
  expect_bad([] { completion({{"prompt", json::array()}}); }, "prompt");
  expect_bad([] { completion({{"prompt", {"a", 5}}}); }, "prompt[1]");
  expect_bad([] { completion({{"prompt", {1, -2}}}); }, "prompt[1]");
  expect_bad([] { completion({{"max_tokens", 0}}); }, "max_tokens");
  expect_bad([] { completion({{"suffix", "x"}}); }, "suffix");
}

const json kTool = {{"type", "function"},
                    {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}};

TEST(OpenAiRequest, ToolsAndToolCallsAreReadForTheTemplate) {
  const json messages = {{{"role", "user"}, {"content", "Weather?"}},
                         {{"role", "assistant"},
                          {"content", nullptr},
                          {"tool_calls",
                           {{{"id", "call_1"},
                             {"type", "function"},
                             {"function", {{"name", "get_weather"}, {"arguments", R"({"city": "Paris"})"}}}}}}},
                         {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "21 C"}}};
  const CompletionRequest r = chat({{"messages", messages}, {"tools", {kTool}}, {"parallel_tool_calls", false}});
  EXPECT_EQ(r.tool_choice.mode, ToolChoice::Mode::kAuto);
  EXPECT_FALSE(r.parallel_tool_calls);
  ASSERT_EQ(r.messages.size(), 3u);
  // Templates print the arguments with tojson: they get the object, not the string.
  EXPECT_EQ(r.messages[1]["tool_calls"][0]["function"]["arguments"], nlohmann::ordered_json({{"city", "Paris"}}));
  EXPECT_EQ(r.messages[1]["content"], "");
  EXPECT_EQ(r.messages[2]["tool_call_id"], "call_1");
  EXPECT_EQ(r.tools[0]["function"]["name"], "get_weather");

  EXPECT_EQ(chat(json::object()).tool_choice.mode, ToolChoice::Mode::kNone);
  EXPECT_EQ(chat({{"tools", {kTool}}, {"tool_choice", "none"}}).tool_choice.mode, ToolChoice::Mode::kNone);
  EXPECT_EQ(chat({{"tools", {kTool}}, {"tool_choice", "required"}}).tool_choice.mode, ToolChoice::Mode::kRequired);
  const CompletionRequest named =
      chat({{"tools", {kTool}}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "get_weather"}}}}}});
  EXPECT_EQ(named.tool_choice.mode, ToolChoice::Mode::kNamed);
  EXPECT_EQ(named.tool_choice.name, "get_weather");
}

TEST(OpenAiRequest, BadToolsAreNamed) {
  expect_bad([] { chat({{"tools", kTool}}); }, "tools");
  expect_bad([] { chat({{"tools", {{{"type", "retrieval"}}}}}); }, "tools[0].type");
  expect_bad(
      [] {
        chat({{"tools", {{{"type", "function"}, {"function", {{"name", "a b"}}}}}}});
      },
      "tools[0].function.name");
  expect_bad(
      [] {
        chat({{"tools", {{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", 3}}}}}}});
      },
      "tools[0].function.parameters");
  expect_bad([] { chat({{"tool_choice", "required"}}); }, "tool_choice");
  expect_bad([] { chat({{"tools", {kTool}}, {"tool_choice", "always"}}); }, "tool_choice");
  expect_bad(
      [] {
        chat({{"tools", {kTool}}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "other"}}}}}});
      },
      "tool_choice.function.name");
  expect_bad([] { chat({{"functions", json::array()}}); }, "functions");
  expect_bad([] { chat({{"messages", {{{"role", "tool"}, {"content", "x"}}}}}); }, "messages[0].tool_call_id");
  const json bad_arguments = {
      {{"role", "assistant"},
       {"tool_calls", {{{"id", "c"}, {"function", {{"name", "f"}, {"arguments", "{not json"}}}}}}}};
  expect_bad([&] { chat({{"messages", bad_arguments}}); }, "messages[0].tool_calls[0].function.arguments");
  const json calls_from_user = {{{"role", "user"}, {"content", "x"}, {"tool_calls", json::array()}}};
  expect_bad([&] { chat({{"messages", calls_from_user}}); }, "messages[0].tool_calls");
}

TEST(OpenAiRequest, IntegralFloatsAreIntegersAsInJsonSchema) {
  const CompletionRequest r = chat({{"n", 2.0}, {"max_tokens", 3.0}, {"seed", -1}});
  EXPECT_EQ(r.n, 2);
  EXPECT_EQ(r.config.max_new_tokens, 3);
  EXPECT_EQ(r.config.rng_seed, ~std::uint64_t{0});
}

TEST(OpenAiRequest, NullMeansNotSet) {
  const CompletionRequest r = chat({{"temperature", nullptr}, {"stop", nullptr}, {"max_tokens", nullptr}});
  EXPECT_TRUE(r.config.do_sample);
  EXPECT_TRUE(r.config.stop_strings.empty());
}

TEST(OpenAiRequest, BodyMustBeAJsonObject) {
  for (const char* body : {"{", "[1]", "", "nul"}) {
    try {
      parse_json_body(body);
      ADD_FAILURE() << body;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400);
    }
  }
  EXPECT_TRUE(parse_json_body(R"({"a": 1})").is_object());
  // The error says where the text broke, and a number past a double is refused too.
  try {
    parse_json_body(R"({"a": 1,})");
    ADD_FAILURE() << "a trailing comma parsed";
  } catch (const ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("the request body: invalid JSON at byte 9"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_json_body(R"({"a": 311e400})"), ApiError);
}

TEST(OpenAiRequest, ToolCallArgumentsAndSchemaTextMustBeJson) {
  const json call = {{"id", "c"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", "{\"x\": "}}}};
  expect_bad(
      [&] {
        chat({{"messages", {{{"role", "assistant"}, {"content", ""}, {"tool_calls", {call}}}}}});
      },
      "messages[0].tool_calls[0].function.arguments");
  expect_bad([&] { chat({{"guided_json", "{not json"}}); }, "guided_json");
}

TEST(OpenAiRequest, DeepNestingIsA400NotACrash) {
  // 100,000 levels (200 KB) overflowed the stack where the request was read, before the limit.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  try {
    parse_json_body("{\"guided_json\": " + deep + "}");
    ADD_FAILURE() << "no error for a body nested 100,000 deep";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_NE(std::string(e.what()).find("128 levels"), std::string::npos) << e.what();
  }
  // The body's object is level 0: 127 arrays inside it still parse, 128 do not.
  EXPECT_TRUE(parse_json_body("{\"a\": " + std::string(127, '[') + std::string(127, ']') + "}").is_object());
  EXPECT_THROW(parse_json_body("{\"a\": " + std::string(128, '[') + std::string(128, ']') + "}"), ApiError);
  // Tool-call arguments arrive as JSON text inside the body: the same limit, naming the field.
  const json call = {{"id", "c"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", deep}}}};
  expect_bad(
      [&] {
        chat({{"messages", {{{"role", "assistant"}, {"content", ""}, {"tool_calls", {call}}}}}});
      },
      "messages[0].tool_calls[0].function.arguments");
  // So is a guided_json schema sent as text, which the grammar compiler walks level by level.
  expect_bad([&] { chat({{"guided_json", deep}}); }, "guided_json");
  EXPECT_TRUE(
      chat({{"guided_json", R"({"type": "array", "items": {"type": "integer"}})"}}).config.structured_output_config);
}

TEST(OpenAiRequest, ErrorBodyHasOpenAisShape) {
  const json body = json::parse(ApiError::bad_request("'n' must be an integer", "n").to_json());
  EXPECT_EQ(body["error"]["message"], "'n' must be an integer");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_EQ(body["error"]["param"], "n");
  EXPECT_TRUE(body["error"]["code"].is_null());
  const HttpResponse limited = error_response(ApiError::overloaded("busy"));
  EXPECT_EQ(limited.status, 429);
  ASSERT_EQ(limited.headers.size(), 1u);
  EXPECT_EQ(limited.headers[0].first, "Retry-After");
}

}  // namespace
}  // namespace kiln::server
