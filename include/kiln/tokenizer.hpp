// kiln's tokenizer: Hugging Face tokenizer.json + tokenizer_config.json, giving the same ids as
// the `tokenizers` library and the same text as transformers' decode. A Tokenizer is an
// immutable, cheaply copyable handle; encode/decode may be called from many threads at once.
//
// Input text that is not valid UTF-8 is repaired first: every maximal ill-formed byte sequence
// becomes U+FFFD, exactly what Python's bytes.decode("utf-8", errors="replace") gives, so the
// ids equal those HF computes for the string Python would see.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/api.hpp"
#include "kiln/chat_history.hpp"

namespace kiln {

namespace tok {
struct TokenizerImpl;
struct TokenizerAccess;
class DecodePipeline;
}  // namespace tok

struct DecodeOptions {
  bool skip_special_tokens = false;
  // transformers' clean_up_tokenization (" ." -> "." and similar). nullopt: as
  // tokenizer_config.json's clean_up_tokenization_spaces says (false when absent).
  std::optional<bool> clean_up_tokenization_spaces;
};

class KILN_API Tokenizer {
 public:
  // `dir` holds tokenizer.json and optionally tokenizer_config.json (and chat_template.jinja):
  // an HF checkpoint, an exported kiln model, or a bare tokenizer folder. Errors name the file
  // and the component (e.g. "tokenizer.json: model.type 'Unigram' is not supported").
  static Tokenizer from_dir(const std::filesystem::path& dir);
  // The same from explicit files; `config` may be empty.
  static Tokenizer from_files(const std::filesystem::path& tokenizer_json, const std::filesystem::path& config = {});
  // The same from the files' contents (JSON text); `config_json` may be empty.
  static Tokenizer from_json(std::string_view tokenizer_json, std::string_view config_json = {});

  std::vector<std::int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
  std::vector<std::vector<std::int32_t>> encode_batch(std::span<const std::string> texts,
                                                      bool add_special_tokens = true) const;

  // Ids the tokenizer does not know are skipped, as HF does.
  std::string decode(std::span<const std::int32_t> ids, bool skip_special_tokens = false) const;
  std::string decode(std::span<const std::int32_t> ids, const DecodeOptions& options) const;

  std::int32_t vocab_size() const;  // including added tokens
  std::optional<std::int32_t> bos_token_id() const;
  std::optional<std::int32_t> eos_token_id() const;
  std::optional<std::int32_t> pad_token_id() const;
  std::optional<std::int32_t> unk_token_id() const;
  // Token strings from tokenizer_config.json ("" when not set).
  std::string bos_token() const;
  std::string eos_token() const;
  std::string pad_token() const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  // True when `id` is a vocabulary entry or an added token.
  bool has_id(std::int32_t id) const;
  // The vocabulary string of `id` (e.g. "Ġworld"); throws kiln::Error for an unknown id.
  std::string id_to_token(std::int32_t id) const;
  // True for added tokens marked special (what skip_special_tokens removes).
  bool is_special(std::int32_t id) const;

  const std::string& chat_template() const;  // "" when none
  // The prompt `history` renders to with the tokenizer's chat template (or `chat_template` when
  // given), as transformers' apply_chat_template(messages, tokenize=False) returns it. Throws
  // kiln::Error when there is no template or it does not render (with the line and column).
  std::string apply_chat_template(const ChatHistory& history, bool add_generation_prompt,
                                  const std::string& chat_template = {}) const;
  // sha256 over the model (vocabulary, merges, options), the added tokens and the normalizer,
  // pre-tokenizer, post-processor and decoder: equal fingerprints mean equal ids and text.
  std::string fingerprint() const;

 private:
  friend class IncrementalDetokenizer;
  friend struct tok::TokenizerAccess;
  explicit Tokenizer(std::shared_ptr<const tok::TokenizerImpl> impl);
  std::shared_ptr<const tok::TokenizerImpl> impl_;
};

// Streaming decode: push ids one at a time; each call returns only text no later id can change,
// in whole UTF-8 characters. The concatenation of all push() results and flush() equals
// tokenizer.decode(all ids, options).
class KILN_API IncrementalDetokenizer {
 public:
  explicit IncrementalDetokenizer(const Tokenizer& tokenizer, DecodeOptions options = {});
  ~IncrementalDetokenizer();
  IncrementalDetokenizer(IncrementalDetokenizer&&) noexcept;
  IncrementalDetokenizer& operator=(IncrementalDetokenizer&&) noexcept;

  std::string push(std::int32_t id);
  // Returns the text still held back and starts over (the detokenizer can be reused).
  std::string flush();

 private:
  Tokenizer tokenizer_;
  DecodeOptions options_;
  std::unique_ptr<tok::DecodePipeline> pipeline_;
};

}  // namespace kiln
