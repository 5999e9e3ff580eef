// llama.cpp's view of a GGUF vocabulary's special tokens (llama_vocab::impl::load): the ids of
// tokenizer.ggml.*_token_id with its defaults, the token types it corrects by token text before it
// splits special tokens out of a prompt, and the tokens that end generation. A tokenizer rebuilt
// from the file must start from the same types, or "<|im_end|>" typed NORMAL by a converter would
// be one token in llama.cpp and six in kiln.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/gguf_file.hpp"

namespace kiln::ir {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class GgufTokenType : std::int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct GgufSpecialIds {
  std::optional<std::int32_t> bos, eos, eot, eom, unk, pad;
  std::optional<std::int32_t> fim_pre, fim_suf, fim_mid, fim_pad, fim_rep, fim_sep;
};

// The defaults a vocabulary type gives before the metadata is read (SentencePiece: <unk> 0,
// <s> 1, </s> 2; byte-level BPE: 11 for both BOS and EOS, as llama.cpp has it); a default
// outside the vocabulary is dropped, as llama.cpp does.
struct GgufSpecialDefaults {
  std::optional<std::int32_t> bos, eos, unk;
};

// Reads tokenizer.ggml.{bos,eos,eot,eom,unknown,padding,fim_*}_token_id over the defaults.
// Throws kiln::Error naming the key when one is not an integer or lies outside the vocabulary.
GgufSpecialIds read_gguf_special_ids(const GgufFile& file, std::int32_t num_tokens, GgufSpecialDefaults defaults);

// llama.cpp's corrections, in its order: end-of-turn, FIM and end-of-generation tokens it knows by
// text become CONTROL (and fill eot / eom / fim_* when the metadata did not), gpt-oss's channel
// tokens become USER_DEFINED, and so does "<|end|>" when "<|return|>" / "<|call|>" end turns
// instead. Returns the end-of-generation ids (sorted).
// NOTE: where several tokens match one of the eot / fim lists llama.cpp takes whichever its hash
// map yields first; this takes the lowest id.
std::vector<std::int32_t> apply_llama_cpp_token_types(const std::vector<std::string>& tokens,
                                                      std::vector<GgufTokenType>& types, GgufSpecialIds& ids);

}  // namespace kiln::ir
