// A GGUF's tokenizer (its tokenizer.ggml.* metadata) rebuilt as the Hugging Face tokenizer.json
// and tokenizer_config.json that give the ids and text llama.cpp gives for that file, so that
// kiln's one HF-compatible tokenizer serves GGUF models too. Pure JSON production: the ir layer
// does not link the tokenizer.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/gguf_file.hpp"
#include "util/json.hpp"

namespace kiln::ir {

struct GgufTokenizerFiles {
  Json tokenizer;         // tokenizer.json
  Json tokenizer_config;  // tokenizer_config.json
  // The tokens llama.cpp ends generation at (its EOG set: EOS, EOT, EOM and the end-of-turn
  // tokens it knows by text, such as "<|eot_id|>" beside Llama 3's EOS "<|end_of_text|>"), sorted:
  // generation_config.json's eos_token_id list.
  std::vector<std::int32_t> end_of_generation_ids;
};

// tokenizer.ggml.model "gpt2" (byte-level BPE; tokenizer.ggml.pre picks the pre-tokenizer) and
// "llama" (llama.cpp's SentencePiece merging by score). Throws kiln::Error naming the file and
// the key (and the index in an array) when the metadata is missing, malformed or unsupported.
GgufTokenizerFiles tokenizer_files_from_gguf(const GgufFile& file);

// GgufTokenizerFiles::end_of_generation_ids alone (the model config's EOS list), without building
// the tokenizer.
std::vector<std::int32_t> gguf_end_of_generation_ids(const GgufFile& file);

}  // namespace kiln::ir
