// Streaming: what a callback tells the generator after each piece of output, and the forms a
// streamer takes. The names are OpenVINO GenAI's (ov::genai::StreamingStatus, StreamerBase,
// StreamerVariant) so code carries over.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "kiln/api.hpp"

namespace kiln {

enum class StreamingStatus {
  RUNNING,  // keep generating
  STOP,     // stop now; what was generated is kept (and stays in chat history)
  CANCEL,   // stop now; the turn is dropped from chat history
};

// Token-level streaming: write() gets every generated token id, the EOS or stop token that
// ended the sequence included (it is in the result's ids too, though not in its text: OpenVINO
// GenAI's streamers get it as well), and end() is called once when generation is over.
class KILN_API StreamerBase {
 public:
  virtual ~StreamerBase() = default;
  virtual StreamingStatus write(std::int32_t token) = 0;
  virtual void end() {}
};

// Text streaming: the callback gets pieces of text in whole UTF-8 characters, never a part of a
// stop string: each piece is what is new since the last one (a token's text, or several tokens'
// when the engine ran ahead of the caller). The bool form returns true to stop.
using TextStreamerCallback = std::function<StreamingStatus(const std::string& text)>;
using BoolStreamerCallback = std::function<bool(const std::string& text)>;

using StreamerVariant =
    std::variant<std::monostate, TextStreamerCallback, BoolStreamerCallback, std::shared_ptr<StreamerBase>>;

}  // namespace kiln
