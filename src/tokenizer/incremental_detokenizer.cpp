// kiln::IncrementalDetokenizer: one DecodePipeline fed id by id. decode() is built on it, so
// "the pieces concatenate to decode(all ids)" holds by construction.
#include "kiln/tokenizer.hpp"
#include "tokenizer/decode_pipeline.hpp"
#include "tokenizer/tokenizer_impl.hpp"

namespace kiln {
namespace {

std::unique_ptr<tok::DecodePipeline> make_pipeline(const tok::TokenizerImpl& impl, const DecodeOptions& options) {
  const bool clean_up = options.clean_up_tokenization_spaces.value_or(impl.config.clean_up_tokenization_spaces);
  return std::make_unique<tok::DecodePipeline>(impl.decoder_steps, clean_up);
}

}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, DecodeOptions options)
    : tokenizer_(tokenizer), options_(options), pipeline_(make_pipeline(*tokenizer_.impl_, options_)) {}

IncrementalDetokenizer::~IncrementalDetokenizer() = default;
IncrementalDetokenizer::IncrementalDetokenizer(IncrementalDetokenizer&&) noexcept = default;
IncrementalDetokenizer& IncrementalDetokenizer::operator=(IncrementalDetokenizer&&) noexcept = default;

std::string IncrementalDetokenizer::push(std::int32_t id) {
  const tok::TokenizerImpl& impl = *tokenizer_.impl_;
  const std::string* token = impl.decode_string(id);
  if (token == nullptr) return {};  // unknown ids are skipped, as HF does
  if (options_.skip_special_tokens && impl.dropped_when_skipping_special(id)) return {};
  pipeline_->push_token(*token);
  return pipeline_->take_output();
}

std::string IncrementalDetokenizer::flush() {
  pipeline_->finish();
  std::string rest = pipeline_->take_output();
  pipeline_ = make_pipeline(*tokenizer_.impl_, options_);
  return rest;
}

}  // namespace kiln
