// One sequence's generated tokens as streamed text: whole UTF-8 characters only, and stop
// strings matched across token boundaries. Invariant: no emitted text ever contains a stop
// string or ends with a proper prefix of one that later tokens could complete; such a tail is
// held back until the next tokens decide it (or the end of generation releases it).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "kiln/tokenizer.hpp"

namespace kiln::genai {

class TextStream {
 public:
  // Special tokens are skipped (they are not text) unless `skip_special_tokens` is false.
  TextStream(const Tokenizer& tokenizer, const std::set<std::string>& stop_strings, bool include_stop_string,
             bool skip_special_tokens = true);

  struct Delta {
    std::string text;      // safe to show now
    bool stopped = false;  // a stop string completed; `text` ends the output
  };

  // The text token `id` makes final. After a stop, further pushes return nothing.
  Delta push(std::int32_t id);
  // Generation ended without a stop string: the held-back tail is released.
  std::string finish();

  // Everything emitted so far: the output text.
  const std::string& text() const { return emitted_; }
  bool stopped() const { return stopped_; }

 private:
  // Emits what pending_ allows: up to a completed stop string, or up to the ambiguous tail.
  Delta scan();
  std::string release(std::size_t count);
  // Start of the earliest suffix of pending_ that a later token could turn into a stop string.
  std::size_t ambiguous_tail_start() const;

  IncrementalDetokenizer detokenizer_;
  std::vector<std::string> stop_strings_;
  bool include_stop_string_;
  std::string pending_;  // decoded, not yet emitted
  std::string emitted_;
  bool stopped_ = false;
};

}  // namespace kiln::genai
