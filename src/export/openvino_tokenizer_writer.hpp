// OpenVINO GenAI's tokenizer models (openvino_tokenizer.xml / .bin and openvino_detokenizer.xml /
// .bin) built from a Hugging Face tokenizer.json + tokenizer_config.json, as openvino-tokenizers'
// `convert_tokenizer` builds them: the ops of its extension (SpecialTokensSplit, RegexSplit,
// BPETokenizer, VocabDecoder, ...), every string table a u8 Const beside i32 begin / end offsets,
// and the rt_info keys GenAI reads (token ids, chat template). Byte-level BPE (Llama 3, Qwen2 /
// 2.5 / 3) and SentencePiece-style BPE with byte fallback (Llama 2, Mistral); anything else is
// refused naming the tokenizer.json field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::exporter {

inline constexpr const char* kOpenVinoTokenizerXml = "openvino_tokenizer.xml";
inline constexpr const char* kOpenVinoTokenizerBin = "openvino_tokenizer.bin";
inline constexpr const char* kOpenVinoDetokenizerXml = "openvino_detokenizer.xml";
inline constexpr const char* kOpenVinoDetokenizerBin = "openvino_detokenizer.bin";

struct OpenVinoTokenizerModels {
  std::string tokenizer_xml;
  std::vector<std::uint8_t> tokenizer_bin;
  std::string detokenizer_xml;
  std::vector<std::uint8_t> detokenizer_bin;
};

// Reads `dir`'s tokenizer.json, tokenizer_config.json and chat_template.jinja (the last two when
// present). A tokenizer of another kind, or with a normalizer, pre-tokenizer, post-processor,
// decoder or added-token rule the graphs do not reproduce, is refused (kiln::Error, kUnsupported)
// naming the field and its value.
OpenVinoTokenizerModels build_openvino_tokenizers(const std::filesystem::path& dir);

// Writes the four files into `dir` (an existing directory).
void write_openvino_tokenizers(const OpenVinoTokenizerModels& models, const std::filesystem::path& dir);

}  // namespace kiln::exporter
