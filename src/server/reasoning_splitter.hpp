// Splits a reasoning model's output into its reasoning and its answer, as vLLM's reasoning
// parsers do for `<think>` models (DeepSeek-R1, Qwen3, ...): text between <think> and </think>
// is reasoning_content, the rest is content. It works on streamed pieces: a tag split across two
// pieces is held back until the next piece decides it, so no delta ever shows half a tag.
#pragma once

#include <string>
#include <string_view>

namespace kiln::server {

struct SplitText {
  std::string reasoning;
  std::string content;
};

class ReasoningSplitter {
 public:
  // `in_reasoning`: the prompt already opened the block (its template ends in <think>), as
  // DeepSeek-R1's does, so the output starts inside it.
  explicit ReasoningSplitter(bool in_reasoning = false) : in_reasoning_(in_reasoning) {}

  SplitText push(std::string_view piece);
  SplitText flush();  // the end: what was held back (an unfinished tag is plain text)

 private:
  bool in_reasoning_;
  std::string held_;  // a suffix that may be the start of a tag
};

}  // namespace kiln::server
