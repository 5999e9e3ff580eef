// The body of POST /v1/chat/completions and /v1/completions, read into what the pipeline takes:
// the prompt(s) and a GenerationConfig. Every field is checked for its type and range here, at
// the edge, and a bad one is a 400 naming it. Fields kiln does not do yet (response formats
// other than text) are refused by name, never silently ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/generation_config.hpp"

namespace kiln::server {

enum class Endpoint { kChat, kCompletions };

// Which tools the answer may call: tool_choice.
struct ToolChoice {
  enum class Mode { kNone, kAuto, kRequired, kNamed };
  Mode mode = Mode::kAuto;
  std::string name;  // kNamed
};

// A completion prompt: text, or token ids.
using Prompt = std::variant<std::string, std::vector<std::int32_t>>;

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;  // "" when the request names none
  // Chat: the messages as chat templates take them ({"role", "content": text, and "tool_calls"
  // with arguments as objects, "tool_call_id", "name" where given}), in the request's key order.
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;  // chat: the function tools, or null
  // vLLM's chat extras: more template variables (chat_template_kwargs, e.g. enable_thinking),
  // retrieval documents, and how the prompt ends: with the template's generation prompt
  // (add_generation_prompt, the default) or inside the last, assistant, message
  // (continue_final_message: the answer continues it).
  nlohmann::ordered_json template_variables;  // an object, or null
  nlohmann::ordered_json documents;           // an array of objects, or null
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  ToolChoice tool_choice;  // kNone when there are no tools
  bool parallel_tool_calls = true;
  std::vector<Prompt> prompts;  // completions: one choice group per prompt
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  bool echo = false;              // completions: the prompt text comes first
  bool logprobs = false;          // report each token's log-probability
  std::int64_t top_logprobs = 0;  // and this many alternatives
  // Choices per prompt. Greedy choices are all the same: the engine makes one and it is copied
  // (config.num_return_sequences is 1 then); sampled ones are the engine's sequences.
  std::int64_t n = 1;
  GenerationConfig config;
};

struct RequestLimits {
  std::int64_t max_tokens = 0;  // largest max_tokens a request may ask for (0: the context)
};

// `defaults` is the model's generation config. Throws ApiError (400) naming the field at fault.
CompletionRequest parse_completion_request(Endpoint endpoint, const nlohmann::ordered_json& body,
                                           const GenerationConfig& defaults, const RequestLimits& limits);

// A JSON integer, including JSON Schema's integral floats such as 1.0 (nullopt otherwise).
std::optional<std::int64_t> json_integer(const nlohmann::ordered_json& value);

// The body as JSON, its objects' keys in the order sent (chat templates print tool schemas as
// given); malformed JSON or a non-object is a 400.
nlohmann::ordered_json parse_json_body(const std::string& body);

}  // namespace kiln::server
