#include "server/answer_parsers.hpp"

#include "util/error.hpp"

namespace kiln::server {

AnswerParsers answer_parsers(const std::string& reasoning_parser, const std::string& tool_call_parser,
                             const std::string& where) {
  AnswerParsers parsers;
  if (!reasoning_parser.empty()) {
    if (reasoning_parser != "think" && reasoning_parser != "deepseek_r1" && reasoning_parser != "qwen3") {
      fail("{}: reasoning parser '{}' is not one of think, deepseek_r1, qwen3", where, reasoning_parser);
    }
    parsers.split_reasoning = true;
  }
  if (!tool_call_parser.empty()) {
    parsers.tool_call_format = tool_call_format(tool_call_parser);
    if (!parsers.tool_call_format) {
      fail("{}: tool-call parser '{}' is not one of hermes, llama3_json, mistral", where, tool_call_parser);
    }
  }
  return parsers;
}

}  // namespace kiln::server
