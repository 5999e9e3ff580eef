// What each token contributes to a text, as bytes: the alphabet a byte-level grammar matches
// tokens in (structured output). A byte-level BPE token is its alphabet's bytes, a
// SentencePiece token has its "▁" as a space and "<0xNN>" as that byte, an added token
// (special or not) is its content, as xgrammar and llama.cpp match them; an unknown id is
// nullopt.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/tokenizer.hpp"

namespace kiln::tok {

// [vocab_size]; throws kiln::Error when the tokenizer's decoder cannot say what one token alone
// stands for (WordPiece, CTC, no decoder).
std::vector<std::optional<std::string>> token_bytes(const Tokenizer& tokenizer);

}  // namespace kiln::tok
