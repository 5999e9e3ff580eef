// Pre-tokenizers: cut normalized text into the pieces the model encodes one by one, as HF
// `tokenizers` does (Split, ByteLevel, Metaspace, Whitespace, WhitespaceSplit, BertPreTokenizer,
// Punctuation, Digits, CharDelimiterSplit, FixedLength, Sequence). Pieces stream through a
// callback, so a long text is never held as a vector of pieces.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/split_behavior.hpp"
#include "util/json.hpp"

namespace kiln::tok {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Emits the non-empty pieces of `text` in order.
  virtual void pre_tokenize(std::string_view text, bool at_start, PieceSink sink) const = 0;
};

struct PreTokenizerOptions {
  // The model reads raw bytes: the final ByteLevel step leaves its pieces unmapped (the model
  // maps them itself, faster). Only the last step of the top-level chain honours it.
  bool defer_final_byte_level_mapping = false;
};

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& spec, const std::string& origin,
                                                 const PreTokenizerOptions& options = {});

// True when `spec` ends with a ByteLevel step (so its mapping can be deferred to the model).
bool ends_with_byte_level(const Json& spec);

}  // namespace kiln::tok
