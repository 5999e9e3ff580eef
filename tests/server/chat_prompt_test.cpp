// How a chat request becomes its prompt. Oracles: Jinja2 semantics written out by hand for a
// small template, transformers' apply_chat_template rule for continue_final_message (cut after
// the last occurrence of the final message's content, or of its stripped form), and the
// formats' call openings for a forced tool call.
#include "server/chat_prompt.hpp"

#include <gtest/gtest.h>

#include "server/api_error.hpp"

namespace kiln::server {
namespace {

using OrderedJson = nlohmann::ordered_json;

const ChatTemplate kTemplate(
    "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</{{ m.role }}>{% endfor %}"
    "{% if documents %}[{{ documents | length }} documents]{% endif %}"
    "{% if add_generation_prompt %}<assistant>{% if thinking is defined and not thinking %}<think></think>{% endif %}"
    "{% endif %}",
    nullptr);

CompletionRequest chat_request(OrderedJson body) {
  if (!body.contains("messages")) body["messages"] = OrderedJson::array({{{"role", "user"}, {"content", "Hi"}}});
  return parse_completion_request(Endpoint::kChat, body, GenerationConfig{}, {});
}

TEST(ChatPrompt, VariablesAndDocumentsReachTheTemplate) {
  EXPECT_EQ(render_chat_prompt(kTemplate, chat_request(OrderedJson::object()), std::nullopt).rendered,
            "<user>Hi</user><assistant>");
  const CompletionRequest r = chat_request(
      {{"chat_template_kwargs", {{"thinking", false}}}, {"documents", {{{"title", "a"}}, {{"title", "b"}}}}});
  EXPECT_EQ(render_chat_prompt(kTemplate, r, std::nullopt).rendered,
            "<user>Hi</user>[2 documents]<assistant><think></think>");
  EXPECT_EQ(render_chat_prompt(kTemplate, chat_request({{"add_generation_prompt", false}}), std::nullopt).rendered,
            "<user>Hi</user>");
}

TEST(ChatPrompt, ContinueFinalMessageEndsInsideIt) {
  const OrderedJson messages = {{{"role", "user"}, {"content", "Hi"}},
                                {{"role", "assistant"}, {"content", "Hello, I"}}};
  const CompletionRequest r = chat_request({{"messages", messages}, {"continue_final_message", true}});
  EXPECT_FALSE(r.add_generation_prompt);
  EXPECT_EQ(render_chat_prompt(kTemplate, r, std::nullopt).rendered, "<user>Hi</user><assistant>Hello, I");
  // The template trims the message: the cut falls after its stripped form.
  const OrderedJson padded = {{{"role", "user"}, {"content", "Hi"}}, {{"role", "assistant"}, {"content", " Sure \n"}}};
  EXPECT_EQ(render_chat_prompt(kTemplate, chat_request({{"messages", padded}, {"continue_final_message", true}}),
                               std::nullopt)
                .rendered,
            "<user>Hi</user><assistant>Sure");
}

TEST(ChatPrompt, AForcedCallStartsAfterTheGenerationPrompt) {
  const OrderedJson tools = {{{"type", "function"}, {"function", {{"name", "get_time"}}}}};
  const CompletionRequest named =
      chat_request({{"tools", tools}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "get_time"}}}}}});
  const ChatPrompt p = render_chat_prompt(kTemplate, named, ToolCallFormat::kHermes);
  EXPECT_EQ(p.rendered, "<user>Hi</user><assistant>");
  EXPECT_EQ(p.prefill, "<tool_call>\n{\"name\": \"get_time\", \"arguments\": ");
  EXPECT_EQ(render_chat_prompt(kTemplate, chat_request({{"tools", tools}, {"tool_choice", "required"}}),
                               ToolCallFormat::kMistral)
                .prefill,
            "[TOOL_CALLS][{\"name\": \"");
  EXPECT_EQ(render_chat_prompt(kTemplate, chat_request({{"tools", tools}}), ToolCallFormat::kHermes).prefill, "");
}

TEST(ChatPrompt, MistakesAreNamed) {
  const auto param = [](const OrderedJson& body) {
    try {
      render_chat_prompt(kTemplate, chat_request(body), std::nullopt);
    } catch (const ApiError& e) {
      return e.param();
    }
    return std::string("(none)");
  };
  EXPECT_EQ(param({{"continue_final_message", true}}), "continue_final_message");  // the last is the user's
  const OrderedJson answer = {{{"role", "user"}, {"content", "Hi"}}, {{"role", "assistant"}, {"content", "Yes"}}};
  EXPECT_EQ(param({{"messages", answer}, {"continue_final_message", true}, {"add_generation_prompt", true}}),
            "continue_final_message");
  EXPECT_EQ(param({{"chat_template_kwargs", {{"messages", 1}}}}), "chat_template_kwargs");
  EXPECT_EQ(param({{"chat_template_kwargs", 3}}), "chat_template_kwargs");
  EXPECT_EQ(param({{"documents", {1}}}), "documents[0]");
}

TEST(ChatPrompt, ToolCallGrammarFollowsToolChoice) {
  const OrderedJson tools = OrderedJson::array(
      {{{"type", "function"}, {"function", {{"name", "f"}}}}, {{"type", "function"}, {"function", {{"name", "g"}}}}});
  // auto: Hermes's calls open with a marker of their own, so they are checked; Llama 3's are not.
  CompletionRequest r = chat_request({{"tools", tools}});
  EXPECT_TRUE(constrain_tool_calls(ToolCallFormat::kHermes, {}, r));
  ASSERT_TRUE(r.config.structured_output_config);
  EXPECT_EQ(r.config.structured_output_config->triggers, std::vector<std::string>{"<tool_call>"});
  EXPECT_EQ(r.config.structured_output_config->structural_tags.size(), 2u);
  r = chat_request({{"tools", tools}});
  EXPECT_FALSE(constrain_tool_calls(ToolCallFormat::kLlama3Json, {}, r));
  EXPECT_FALSE(r.config.structured_output_config);
  // Named: after the prefill, only that tool's arguments and the call's end.
  r = chat_request({{"tools", tools}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "g"}}}}}});
  const ChatPrompt prompt{"", tool_call_prefill(ToolCallFormat::kHermes, "g")};
  EXPECT_FALSE(constrain_tool_calls(ToolCallFormat::kHermes, prompt, r));
  ASSERT_TRUE(r.config.structured_output_config);
  EXPECT_EQ(r.config.structured_output_config->structural_tags.size(), 1u);
  // A forced call cannot also follow a response format.
  r = chat_request({{"tools", tools}, {"tool_choice", "required"}, {"response_format", {{"type", "json_object"}}}});
  try {
    constrain_tool_calls(ToolCallFormat::kHermes, {"", tool_call_prefill(ToolCallFormat::kHermes, "")}, r);
    ADD_FAILURE() << "a forced call with a response format";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "tool_choice");
  }
}

}  // namespace
}  // namespace kiln::server
