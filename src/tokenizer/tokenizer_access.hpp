// The tokenizer's internals for the rest of the tokenizer layer (the chat template reads the
// special tokens of tokenizer_config.json): what the public Tokenizer does not expose.
#pragma once

#include "kiln/tokenizer.hpp"
#include "util/json.hpp"

namespace kiln::tok {

struct TokenizerAccess {
  // tokenizer_config.json as loaded ({} when absent).
  static const Json& config(const Tokenizer& tokenizer);
  static const TokenizerImpl& impl(const Tokenizer& tokenizer);
};

}  // namespace kiln::tok
