// kiln::Tokenizer: the public facade over TokenizerImpl, and the encode path (added tokens,
// normalizer, added tokens again in normalized text, pre-tokenizer, model, post-processor).
#include "kiln/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include "tokenizer/decode_pipeline.hpp"
#include "tokenizer/tokenizer_access.hpp"
#include "tokenizer/tokenizer_impl.hpp"
#include "tokenizer/unicode.hpp"
#include "util/json.hpp"
#include "util/path_probe.hpp"

namespace kiln {
namespace tok {

void TokenizerImpl::encode_text(std::string_view text, std::vector<std::int32_t>& ids) const {
  WordCache& cache = model->thread_cache();
  added.split(text, /*normalized_tokens=*/false, [&](AddedVocabulary::Split split) {
    if (split.token_id >= 0) return ids.push_back(split.token_id);
    std::string_view segment = text.substr(split.begin, split.end - split.begin);
    const bool segment_at_start = split.begin == 0;
    std::string normalized;
    if (normalizer) {
      normalized.assign(segment);
      normalizer->normalize(normalized);
      segment = normalized;
    }
    added.split(segment, /*normalized_tokens=*/true, [&](AddedVocabulary::Split inner) {
      if (inner.token_id >= 0) return ids.push_back(inner.token_id);
      const std::string_view piece = segment.substr(inner.begin, inner.end - inner.begin);
      const bool at_start = segment_at_start && inner.begin == 0;
      if (!pre_tokenizer) return model->tokenize(piece, ids, cache);
      pre_tokenizer->pre_tokenize(piece, at_start,
                                  [&](std::string_view word, bool) { model->tokenize(word, ids, cache); });
    });
  });
}

const std::string* TokenizerImpl::decode_string(std::int32_t id) const {
  if (const std::string* added_string = added.decode_string(id)) return added_string;
  return model->id_to_token(id);
}

bool TokenizerImpl::dropped_when_skipping_special(std::int32_t id) const {
  const std::string* token = decode_string(id);
  return token != nullptr && added.is_special_content(*token);
}

}  // namespace tok

Tokenizer::Tokenizer(std::shared_ptr<const tok::TokenizerImpl> impl) : impl_(std::move(impl)) {}

Tokenizer Tokenizer::from_dir(const std::filesystem::path& dir) {
  const auto json = dir / "tokenizer.json";
  if (!is_file_path(json)) {
    fail(ErrorKind::kNotFound, "{}: no tokenizer.json in this directory", dir.string());
  }
  return Tokenizer(tok::load_tokenizer(json, dir / "tokenizer_config.json", dir / "chat_template.jinja"));
}

Tokenizer Tokenizer::from_files(const std::filesystem::path& tokenizer_json, const std::filesystem::path& config) {
  return Tokenizer(tok::load_tokenizer(tokenizer_json, config, {}));
}

Tokenizer Tokenizer::from_json(std::string_view tokenizer_json, std::string_view config_json) {
  tok::TokenizerConfig config;
  if (!config_json.empty()) {
    config =
        tok::parse_tokenizer_config(parse_json_text(config_json, "tokenizer_config.json"), "tokenizer_config.json");
  }
  return Tokenizer(tok::build_tokenizer(tokenizer_json, "tokenizer.json", std::move(config)));
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::string repaired;
  if (!is_valid_utf8(text)) {
    append_utf8_lossy(repaired, text);
    text = repaired;
  }
  std::vector<std::int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  impl_->encode_text(text, ids);
  if (add_special_tokens && impl_->post_processor) impl_->post_processor->process(ids);
  return ids;
}

std::vector<std::vector<std::int32_t>> Tokenizer::encode_batch(std::span<const std::string> texts,
                                                               bool add_special_tokens) const {
  std::vector<std::vector<std::int32_t>> out;
  out.reserve(texts.size());
  for (const std::string& text : texts) out.push_back(encode(text, add_special_tokens));
  return out;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skip_special_tokens) const {
  DecodeOptions options;
  options.skip_special_tokens = skip_special_tokens;
  return decode(ids, options);
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, const DecodeOptions& options) const {
  IncrementalDetokenizer detokenizer(*this, options);
  std::string text;
  for (const std::int32_t id : ids) text += detokenizer.push(id);
  text += detokenizer.flush();
  return text;
}

std::int32_t Tokenizer::vocab_size() const { return impl_->vocab_size; }

std::optional<std::int32_t> Tokenizer::bos_token_id() const {
  return impl_->config.bos_token ? token_to_id(*impl_->config.bos_token) : std::nullopt;
}
std::optional<std::int32_t> Tokenizer::eos_token_id() const {
  return impl_->config.eos_token ? token_to_id(*impl_->config.eos_token) : std::nullopt;
}
std::optional<std::int32_t> Tokenizer::pad_token_id() const {
  return impl_->config.pad_token ? token_to_id(*impl_->config.pad_token) : std::nullopt;
}
std::optional<std::int32_t> Tokenizer::unk_token_id() const {
  return impl_->config.unk_token ? token_to_id(*impl_->config.unk_token) : std::nullopt;
}
std::string Tokenizer::bos_token() const { return impl_->config.bos_token.value_or(""); }
std::string Tokenizer::eos_token() const { return impl_->config.eos_token.value_or(""); }
std::string Tokenizer::pad_token() const { return impl_->config.pad_token.value_or(""); }

std::optional<std::int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto id = impl_->added.token_to_id(token)) return id;
  return impl_->model->token_to_id(token);
}

bool Tokenizer::has_id(std::int32_t id) const { return impl_->decode_string(id) != nullptr; }

std::string Tokenizer::id_to_token(std::int32_t id) const {
  if (const tok::AddedToken* token = impl_->added.token(id)) return token->content;
  if (const std::string* token = impl_->model->id_to_token(id)) return *token;
  fail(ErrorKind::kNotFound, "token id {} is not in the vocabulary (size {})", id, impl_->vocab_size);
}

bool Tokenizer::is_special(std::int32_t id) const {
  const tok::AddedToken* token = impl_->added.token(id);
  return token != nullptr && token->special;
}

const std::string& Tokenizer::chat_template() const { return impl_->config.chat_template; }
const Json& tok::TokenizerAccess::config(const Tokenizer& tokenizer) { return tokenizer.impl_->config.json; }
const tok::TokenizerImpl& tok::TokenizerAccess::impl(const Tokenizer& tokenizer) { return *tokenizer.impl_; }
std::string Tokenizer::fingerprint() const { return impl_->fingerprint; }

}  // namespace kiln
