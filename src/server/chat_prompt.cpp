#include "server/chat_prompt.hpp"

#include "server/api_error.hpp"
#include "util/error.hpp"

namespace kiln::server {

ChatPrompt render_chat_prompt(const ChatTemplate& chat_template, const CompletionRequest& request,
                              std::optional<ToolCallFormat> format, bool add_generation_prompt) {
  ChatTemplateOptions options;
  options.add_generation_prompt = add_generation_prompt;
  options.tools = request.tools;
  ChatPrompt prompt;
  try {
    prompt.rendered = chat_template.apply(request.messages, options);
  } catch (const Error& e) {
    throw ApiError::bad_request(std::string("the model's chat template refused the messages: ") + e.what(), "messages");
  }
  const ToolChoice& choice = request.tool_choice;
  if (add_generation_prompt && format &&
      (choice.mode == ToolChoice::Mode::kRequired || choice.mode == ToolChoice::Mode::kNamed)) {
    prompt.prefill = tool_call_prefill(*format, choice.name);
  }
  return prompt;
}

}  // namespace kiln::server
