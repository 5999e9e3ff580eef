// A chat request's prompt: its messages and tools rendered by the model's chat template (as
// transformers' apply_chat_template does), then, when tool_choice forces a call, the start of
// that call written for the model to continue; and the grammar that holds its calls to the tools.
#pragma once

#include <optional>
#include <string>

#include "server/openai_request.hpp"
#include "server/tool_call_parser.hpp"
#include "tokenizer/chat_template.hpp"

namespace kiln::server {

struct ChatPrompt {
  std::string rendered;  // the template's output
  std::string prefill;   // the forced call's start ("" unless tool_choice is required or named)
};

// `format`: the model's tool-call parser (needed for a prefill). With continue_final_message the
// rendering ends where the last message's content does, as transformers' apply_chat_template
// cuts it. Throws ApiError (400) where the template refuses the conversation, with its message.
ChatPrompt render_chat_prompt(const ChatTemplate& chat_template, const CompletionRequest& request,
                              std::optional<ToolCallFormat> format);

// The tool-call grammar of a chat request with tools, set in request.config: a forced call's
// (tool_choice required or named; prompt.prefill is its start), or for tool_choice auto the
// optional calls' where `format` has one and no other constraint was asked for. A forced call
// with another constraint is an ApiError (400). True when it set tool_choice auto's grammar,
// which the caller may drop where kiln's grammar cannot compile the tools' schemas.
bool constrain_tool_calls(ToolCallFormat format, const ChatPrompt& prompt, CompletionRequest& request);

}  // namespace kiln::server
