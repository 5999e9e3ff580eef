#include "kiln/generation_config.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace kiln {
namespace {

[[noreturn]] void bad_field(std::string_view field, std::string_view problem) {
  fail("GenerationConfig: {} {}", field, problem);
}

}  // namespace

void GenerationConfig::validate() const {
  if (max_new_tokens && *max_new_tokens < 0) {
    bad_field("max_new_tokens", fmt::format("must be >= 0, got {}", *max_new_tokens));
  }
  if (max_length && *max_length <= 0) bad_field("max_length", fmt::format("must be positive, got {}", *max_length));
  if (min_new_tokens < 0) bad_field("min_new_tokens", fmt::format("must be >= 0, got {}", min_new_tokens));
  if (max_new_tokens && min_new_tokens > *max_new_tokens) {
    bad_field("min_new_tokens", fmt::format("({}) exceeds max_new_tokens ({})", min_new_tokens, *max_new_tokens));
  }
  if (!(temperature >= 0.0 && std::isfinite(temperature))) {
    bad_field("temperature", fmt::format("must be finite and >= 0, got {}", temperature));
  }
  if (do_sample && temperature == 0.0) {
    bad_field("temperature", "is 0 while do_sample is true (use do_sample=false for greedy decoding)");
  }
  if (top_k < 0) bad_field("top_k", fmt::format("must be >= 0 (0 disables it), got {}", top_k));
  if (!(top_p > 0.0 && top_p <= 1.0)) bad_field("top_p", fmt::format("must be in (0, 1], got {}", top_p));
  if (!(min_p >= 0.0 && min_p <= 1.0)) bad_field("min_p", fmt::format("must be in [0, 1], got {}", min_p));
  if (!(repetition_penalty > 0.0 && std::isfinite(repetition_penalty))) {
    bad_field("repetition_penalty", fmt::format("must be finite and > 0 (1 disables it), got {}", repetition_penalty));
  }
  if (!(presence_penalty >= -2.0 && presence_penalty <= 2.0)) {
    bad_field("presence_penalty", fmt::format("must be in [-2, 2], got {}", presence_penalty));
  }
  if (!(frequency_penalty >= -2.0 && frequency_penalty <= 2.0)) {
    bad_field("frequency_penalty", fmt::format("must be in [-2, 2], got {}", frequency_penalty));
  }
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0) bad_field("logit_bias", fmt::format("names token {}: token ids are >= 0", id));
    if (!(bias >= -100.0f && bias <= 100.0f)) {
      bad_field("logit_bias", fmt::format("of token {} must be in [-100, 100], got {}", id, bias));
    }
  }
  if (no_repeat_ngram_size < 0)
    bad_field("no_repeat_ngram_size", fmt::format("must be >= 0, got {}", no_repeat_ngram_size));
  for (const std::string& s : stop_strings) {
    if (s.empty()) bad_field("stop_strings", "contains an empty string (it would match at once)");
  }
  // The sets are ordered: a negative id is the first.
  if (!eos_token_ids.empty() && *eos_token_ids.begin() < 0) {
    bad_field("eos_token_ids", fmt::format("contains {}: token ids are >= 0", *eos_token_ids.begin()));
  }
  if (!stop_token_ids.empty() && *stop_token_ids.begin() < 0) {
    bad_field("stop_token_ids", fmt::format("contains {}: token ids are >= 0", *stop_token_ids.begin()));
  }
  validate_sequences();
  validate_speculative();
  if (structured_output_config) {
    structured_output_config->validate();
    if (num_beams > 1) bad_field("structured_output_config", "cannot be combined with beam search (num_beams > 1) yet");
  }
  if (logprobs < 0) bad_field("logprobs", fmt::format("must be >= 0 (0: none), got {}", logprobs));
  if (logprobs > kMaxLogprobs) bad_field("logprobs", fmt::format("must be at most {}, got {}", kMaxLogprobs, logprobs));
}

void StructuredOutputConfig::validate() const {
  const int set = int(json_schema.has_value()) + int(regex.has_value()) + int(grammar.has_value()) +
                  int(!choice.empty()) + int(json_object) + int(!structural_tags.empty());
  if (set != 1) {
    fail(
        "StructuredOutputConfig: set exactly one of json_schema, regex, grammar, choice, json_object and "
        "structural_tags ({} set)",
        set);
  }
  if (!triggers.empty() && structural_tags.empty()) {
    fail("StructuredOutputConfig: triggers open structural_tags, and none are set");
  }
}

void GenerationConfig::validate_sequences() const {
  if (num_beams < 1 || num_beams > kMaxSequences) {
    bad_field("num_beams", fmt::format("must be >= 1 and at most {}, got {}", kMaxSequences, num_beams));
  }
  if (num_return_sequences < 1 || num_return_sequences > kMaxSequences) {
    bad_field("num_return_sequences",
              fmt::format("must be >= 1 and at most {}, got {}", kMaxSequences, num_return_sequences));
  }
  if (num_beams > 1 && do_sample) {
    bad_field("num_beams", fmt::format("is {} while do_sample is true: beam sampling is not supported "
                                       "(set do_sample=false for beam search or num_beams=1 for sampling)",
                                       num_beams));
  }
  if (num_beams > 1 && num_return_sequences > num_beams) {
    bad_field("num_return_sequences", fmt::format("({}) exceeds num_beams ({}): beam search returns at most "
                                                  "num_beams hypotheses",
                                                  num_return_sequences, num_beams));
  }
  if (num_beams == 1 && !do_sample && num_return_sequences > 1) {
    bad_field("num_return_sequences", fmt::format("is {} with greedy decoding, which would return the same "
                                                  "sequence each time (use do_sample=true or num_beams > 1)",
                                                  num_return_sequences));
  }
  if (!std::isfinite(length_penalty))
    bad_field("length_penalty", fmt::format("must be finite, got {}", length_penalty));
}

void GenerationConfig::validate_speculative() const {
  if (num_assistant_tokens < 0 || num_assistant_tokens > kMaxAssistantTokens) {
    bad_field("num_assistant_tokens",
              fmt::format("must be in [0, {}], got {}", kMaxAssistantTokens, num_assistant_tokens));
  }
  if (!(assistant_confidence_threshold >= 0.0 && assistant_confidence_threshold < 1.0)) {
    bad_field("assistant_confidence_threshold",
              fmt::format("must be in [0, 1), got {}", assistant_confidence_threshold));
  }
  if (num_assistant_tokens > 0 && assistant_confidence_threshold > 0) {
    bad_field("assistant_confidence_threshold",
              "and num_assistant_tokens are both set: the draft proposes either "
              "a fixed number of tokens or until its confidence drops, not both");
  }
  if (max_ngram_size < 0)
    bad_field("max_ngram_size", fmt::format("must be >= 0 (0: no prompt lookup), got {}", max_ngram_size));
  if (max_ngram_size > 0 && assistant_confidence_threshold > 0) {
    bad_field("assistant_confidence_threshold", "applies to a draft model, not to prompt lookup (max_ngram_size > 0)");
  }
  const bool speculative = num_assistant_tokens > 0 || assistant_confidence_threshold > 0 || max_ngram_size > 0;
  if (speculative && num_beams > 1) {
    bad_field("num_beams",
              "is > 1 with speculative or prompt-lookup decoding: candidates are verified for one "
              "sequence, not for a beam group");
  }
  if (speculative && num_return_sequences > 1) {
    bad_field("num_return_sequences", "is > 1 with speculative or prompt-lookup decoding, which verifies one sequence");
  }
}

std::int64_t GenerationConfig::new_token_limit(std::int64_t prompt_tokens, std::int64_t context_tokens) const {
  std::int64_t limit = context_tokens - prompt_tokens;
  if (max_new_tokens) {
    limit = std::min(limit, *max_new_tokens);
  } else if (max_length) {
    limit = std::min(limit, *max_length - prompt_tokens);
  }
  return std::max<std::int64_t>(limit, 0);
}

StopCriteria parse_stop_criteria(const std::string& text) {
  if (text == "true" || text == "early") return StopCriteria::EARLY;
  if (text == "false" || text == "heuristic") return StopCriteria::HEURISTIC;
  if (text == "never") return StopCriteria::NEVER;
  fail("early_stopping: '{}' is not one of true (early), false (heuristic), never", text);
}

}  // namespace kiln
