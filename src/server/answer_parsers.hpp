// How a served model's chat answers are read: its <think> reasoning split out, its tool calls
// parsed. Set per model (`--reasoning-parser`, `--tool-call-parser`, or a --config entry's
// "reasoning_parser" and "tool_call_parser"), since each model family writes its own format.
#pragma once

#include <optional>
#include <string>

#include "server/tool_call_parser.hpp"

namespace kiln::server {

struct AnswerParsers {
  bool split_reasoning = false;
  std::optional<ToolCallFormat> tool_call_format;  // nullopt: requests with tools are refused
};

// From vLLM's names: reasoning "think", "deepseek_r1" or "qwen3"; tool calls "hermes",
// "llama3_json" or "mistral" ("" for none). Throws kiln::Error naming `where` and the bad name.
AnswerParsers answer_parsers(const std::string& reasoning_parser, const std::string& tool_call_parser,
                             const std::string& where);

}  // namespace kiln::server
