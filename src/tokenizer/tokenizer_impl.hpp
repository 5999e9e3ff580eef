// The loaded tokenizer behind the kiln::Tokenizer handle: the HF pipeline (normalizer ->
// pre-tokenizer -> BPE model, with added tokens split out first -> post-processor; decoder
// steps for the way back) and tokenizer_config.json. Immutable once loaded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/added_vocabulary.hpp"
#include "tokenizer/decoders.hpp"
#include "tokenizer/model_bpe.hpp"
#include "tokenizer/normalizers.hpp"
#include "tokenizer/post_processor.hpp"
#include "tokenizer/pre_tokenizers.hpp"
#include "tokenizer/tokenizer_config.hpp"

namespace kiln::tok {

struct TokenizerImpl {
  std::unique_ptr<Normalizer> normalizer;       // may be null
  std::unique_ptr<PreTokenizer> pre_tokenizer;  // may be null
  std::unique_ptr<BpeModel> model;
  AddedVocabulary added;
  std::unique_ptr<PostProcessor> post_processor;            // may be null
  std::vector<std::unique_ptr<DecoderStep>> decoder_steps;  // empty: join tokens with spaces
  TokenizerConfig config;
  std::string fingerprint;
  std::int32_t vocab_size = 0;

  // Appends the ids of `text` (valid UTF-8) without post-processing.
  void encode_text(std::string_view text, std::vector<std::int32_t>& ids) const;
  // The string decode() feeds the decoder for `id`, or nullptr for an unknown id.
  const std::string* decode_string(std::int32_t id) const;
  // Whether skip_special_tokens drops `id` (HF compares the decode string with the special set).
  bool dropped_when_skipping_special(std::int32_t id) const;
};

// Builds a tokenizer from the text of tokenizer.json (`file` names it in errors) and its config.
std::shared_ptr<const TokenizerImpl> build_tokenizer(std::string_view text, const std::string& file,
                                                     TokenizerConfig config);

// Loads tokenizer.json (+ tokenizer_config.json and chat_template.jinja when the paths exist).
std::shared_ptr<const TokenizerImpl> load_tokenizer(const std::filesystem::path& tokenizer_json,
                                                    const std::filesystem::path& config,
                                                    const std::filesystem::path& chat_template);

}  // namespace kiln::tok
