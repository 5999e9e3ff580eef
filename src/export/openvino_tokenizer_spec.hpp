// What OpenVINO's tokenizer graphs need from a Hugging Face tokenizer: the vocabulary and merges as
// raw bytes (byte-level BPE's alphabet undone; SentencePiece-style pieces as they are, with "▁"
// and <0xNN> byte tokens), the added tokens, the pre-tokenizer's regex, the
// special tokens the post-processor puts around the text, and tokenizer_config.json's ids and
// template. Reading it is where an unsupported tokenizer is refused, before any graph is built.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::exporter {

struct OvAddedToken {
  std::string content;
  std::int32_t id = 0;
  bool special = false;
};

// Byte-level BPE (GPT-2's alphabet, a regex pre-tokenizer: Llama 3, Qwen2 / 3) or
// SentencePiece-style BPE (spaces as "▁", a "▁" prepended, unknown bytes as <0xNN>: Llama 2,
// Mistral).
enum class OvTokenizerKind { kByteLevel, kSentencePiece };

struct OvTokenizerSpec {
  OvTokenizerKind kind = OvTokenizerKind::kByteLevel;
  std::vector<std::string> vocab;                           // [max id + 1] bytes of each id; "" for a gap
  std::size_t model_vocab_size = 0;                         // model.vocab entries, added tokens aside
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order, as bytes
  std::vector<OvAddedToken> added;                          // tokenizer.json order
  bool nfc = false;                                         // normalizer NFC
  std::string split_regex;                                  // the pre-tokenizer's Split pattern
  std::vector<std::int32_t> prefix_ids, suffix_ids;         // post-processor tokens around one text
  std::string processed_template;                           // GenAI's processed_post_processor_template
  std::optional<std::int32_t> bos_token_id, eos_token_id, pad_token_id;
  std::string chat_template;
  std::int64_t max_length = 0;  // min(model_max_length, INT32_MAX) less the post-processor's tokens
  bool pad_right = true;
};

// Reads `dir`/tokenizer.json (+ tokenizer_config.json, chat_template.jinja when present);
// kiln::Error (kUnsupported) names a field the graphs cannot reproduce.
OvTokenizerSpec read_ov_tokenizer_spec(const std::filesystem::path& dir);

}  // namespace kiln::exporter
