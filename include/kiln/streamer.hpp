// What a streaming callback tells the generator after each piece of output. The names are
// OpenVINO GenAI's (ov::genai::StreamingStatus) so code carries over.
#pragma once

namespace kiln {

enum class StreamingStatus {
  RUNNING,  // keep generating
  STOP,     // stop now; what was generated is kept (and stays in chat history)
  CANCEL,   // stop now; the turn is dropped from chat history
};

}  // namespace kiln
