#include "server/chat_prompt.hpp"

#include "server/api_error.hpp"
#include "util/error.hpp"

namespace kiln::server {

ChatPrompt render_chat_prompt(const ChatTemplate& chat_template, const CompletionRequest& request,
                              std::optional<ToolCallFormat> format) {
  ChatTemplateOptions options;
  options.add_generation_prompt = request.add_generation_prompt;
  options.tools = request.tools;
  options.documents = request.documents;
  options.variables = request.template_variables;
  ChatPrompt prompt;
  try {
    prompt.rendered = chat_template.apply(request.messages, options);
  } catch (const Error& e) {
    throw ApiError::bad_request(std::string("the model's chat template refused the messages: ") + e.what(), "messages");
  }
  if (request.continue_final_message) {
    // transformers' rule: cut after the last occurrence of the final message's content, or of
    // its stripped form (some templates trim messages).
    std::string final = request.messages.back()["content"].get<std::string>();
    std::size_t at = final.empty() ? std::string::npos : prompt.rendered.rfind(final);
    if (at == std::string::npos) {
      const std::size_t first = final.find_first_not_of(" \t\n\r");
      final = first == std::string::npos ? "" : final.substr(first, final.find_last_not_of(" \t\n\r") - first + 1);
      at = final.empty() ? std::string::npos : prompt.rendered.rfind(final);
    }
    if (at == std::string::npos) {
      throw ApiError::bad_request("continue_final_message: the template does not show the final message's content",
                                  "continue_final_message");
    }
    prompt.rendered.resize(at + final.size());
  }
  const ToolChoice& choice = request.tool_choice;
  if (request.add_generation_prompt && format &&
      (choice.mode == ToolChoice::Mode::kRequired || choice.mode == ToolChoice::Mode::kNamed)) {
    prompt.prefill = tool_call_prefill(*format, choice.name);
  }
  return prompt;
}

bool constrain_tool_calls(ToolCallFormat format, const ChatPrompt& prompt, CompletionRequest& request) {
  std::optional<StructuredOutputConfig>& constraint = request.config.structured_output_config;
  if (request.tool_choice.mode == ToolChoice::Mode::kNone) return false;
  if (!prompt.prefill.empty()) {  // required or named: the call is forced, and its grammar enforced
    if (constraint) {
      throw ApiError::bad_request(
          "a structured output constraint cannot be combined with tool_choice 'required' or a named tool",
          "tool_choice");
    }
    constraint = forced_tool_call(format, request.tools, request.tool_choice.name);
    return false;
  }
  if (constraint) return false;
  constraint = optional_tool_calls(format, request.tools);  // auto: a call the model makes must parse
  return constraint.has_value();
}

}  // namespace kiln::server
