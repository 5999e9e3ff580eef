// Tool calls out of a model's generated text, as vLLM's tool parsers find them, streamed: each
// piece of text goes in as it is generated, and what comes out is the content the client may
// see now and the tool-call deltas (a call's id and name first, then its arguments' JSON text
// as it arrives). Three formats:
//   hermes       <tool_call>{"name": ..., "arguments": {...}}</tool_call> (Hermes, Qwen 2.5/3)
//   llama3_json  {"name": ..., "parameters": {...}}; ... as the whole output, after an optional
//                <|python_tag|> (Llama 3.1 - 3.3)
//   mistral      [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...] or
//                [TOOL_CALLS]name[ARGS]{...} (Mistral's newer tokenizers)
// A call ends where its JSON does, so arguments may hold `{}` or a literal "</tool_call>".
// Text that only looked like a call (no valid name) is given back as content.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/generation_config.hpp"

namespace kiln::server {

enum class ToolCallFormat { kHermes, kLlama3Json, kMistral };

// "hermes", "llama3_json" or "mistral" (vLLM's --tool-call-parser names); nullopt otherwise.
std::optional<ToolCallFormat> tool_call_format(std::string_view name);

struct ToolCallDelta {
  std::size_t index = 0;  // the call's position in this output
  std::string id;         // set in a call's first delta only
  std::string name;       // set in a call's first delta only
  std::string arguments;  // more of the arguments' JSON text
};

struct ParsedOutput {
  std::string content;
  std::vector<ToolCallDelta> calls;
};

class ToolCallParser {
 public:
  virtual ~ToolCallParser() = default;
  virtual ParsedOutput push(std::string_view piece) = 0;
  // The end of the output: what was held back. A call cut short keeps what it had.
  virtual ParsedOutput finish() = 0;
};

// `single_call`: everything after the first call is dropped (a named tool_choice, or
// parallel_tool_calls: false).
std::unique_ptr<ToolCallParser> make_tool_call_parser(ToolCallFormat format, bool single_call);

// The text that starts the assistant's answer so that it must call a tool: `name`, or any tool
// when it is empty. The model continues from it; the parser reads it first, as if generated.
std::string tool_call_prefill(ToolCallFormat format, const std::string& name);

// A forced call, enforced: after the prefill, the rest of one call to `name` (or, when it is
// empty, to any of `tools`) whose arguments are JSON valid against the tool's parameters, then
// the call's closing text. `tools` is the request's array of function tools.
StructuredOutputConfig forced_tool_call(ToolCallFormat format, const nlohmann::ordered_json& tools,
                                        const std::string& name);

// Calls the model may make (tool_choice auto), enforced: free text in which "<tool_call>" must go
// on as a whole call to one of `tools`, with arguments valid against its parameters. Hermes only:
// its calls open with a marker of their own. Llama 3's {"name": is also ordinary JSON in prose,
// and Mistral writes several calls in one [TOOL_CALLS] array or in a named form, so those are left
// free (nullopt) rather than bent to one shape.
std::optional<StructuredOutputConfig> optional_tool_calls(ToolCallFormat format, const nlohmann::ordered_json& tools);

}  // namespace kiln::server
