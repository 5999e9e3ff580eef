// One running decode: the tokenizer's decoder steps instantiated as stages, followed by
// transformers' clean_up_tokenization when asked for, feeding an output buffer. decode() pushes
// every token then finishes; the incremental detokenizer takes the output after each token.
// Because both use this class, their results agree by construction.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/decoders.hpp"

namespace kiln::tok {

class DecodePipeline {
 public:
  // `steps` empty means tokenizer.json has no decoder: tokens are joined with spaces, as HF does.
  // The steps must outlive the pipeline.
  DecodePipeline(const std::vector<std::unique_ptr<DecoderStep>>& steps, bool clean_up_spaces);
  ~DecodePipeline();
  DecodePipeline(DecodePipeline&&) noexcept;
  DecodePipeline& operator=(DecodePipeline&&) noexcept;

  void push_token(std::string_view token);
  // Flushes everything held back; no token may be pushed after it.
  void finish();
  // The text produced since the last call (always whole UTF-8 characters).
  std::string take_output();

 private:
  struct Stages;
  std::unique_ptr<Stages> stages_;
};

// transformers' PreTrainedTokenizerBase.clean_up_tokenization on a whole string.
std::string clean_up_tokenization(std::string_view text);

}  // namespace kiln::tok
