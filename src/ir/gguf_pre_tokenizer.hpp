// llama.cpp's byte-level BPE pre-tokenizers by their `tokenizer.ggml.pre` name: the regexes its
// llm_tokenizer_bpe splits text with (src/llama-vocab.cpp) and the per-name switches that change
// ids or decoded text. A GGUF records only the name, so this table is the pre-tokenizer.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

struct GgufPreTokenizer {
  // Applied in order, each to every piece the one before left (HF Split, behavior Isolated).
  // Oniguruma syntax as tokenizer.json holds it, with llama.cpp's meaning.
  std::vector<std::string> regexes;
  bool ignore_merges = false;   // a piece that is a vocabulary entry is one token
  bool add_bos = false;         // llama.cpp's default when tokenizer.ggml.add_bos_token is absent
  bool clean_spaces = true;     // llama_detokenize drops the space in " .", " ,", " 's" ...
  bool has_default_bos = true;  // false: no BOS unless tokenizer.ggml.bos_token_id names one
};

// nullopt for a name kiln does not reproduce (llama.cpp's hand-written splitters without a
// regex, and SentencePiece-style BPE).
std::optional<GgufPreTokenizer> gguf_pre_tokenizer(std::string_view name);

// The supported names, comma-separated, for error messages.
std::string supported_gguf_pre_tokenizers();

}  // namespace kiln::ir
