// Logits processors that depend on the token history, applied in place before sampling in this
// fixed order (Hugging Face's order): repetition penalty, presence and frequency penalties,
// no-repeat n-grams, minimum length (EOS masked); OpenAI's logit bias last.
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "kiln/generation_config.hpp"

namespace kiln::genai {

struct TokenHistory {
  std::span<const std::int32_t> tokens;  // prompt followed by the generated tokens
  std::int64_t num_prompt = 0;

  std::span<const std::int32_t> generated() const { return tokens.subspan(static_cast<std::size_t>(num_prompt)); }
};

// HF RepetitionPenaltyLogitsProcessor: every token seen (prompt or generated) has its logit
// divided by `penalty` when positive and multiplied when negative.
void apply_repetition_penalty(std::span<float> logits, std::span<const std::int32_t> seen, double penalty);

// OpenAI semantics over the generated tokens: logit -= presence·[count > 0] + frequency·count.
void apply_presence_frequency_penalty(std::span<float> logits, std::span<const std::int32_t> generated, double presence,
                                      double frequency);

// HF NoRepeatNGramLogitsProcessor: bans every token that would complete an n-gram already present.
void apply_no_repeat_ngram(std::span<float> logits, std::span<const std::int32_t> tokens, std::int64_t n);

// OpenAI logit_bias: each listed token's logit plus its bias (ids outside the vocabulary are ignored).
void apply_logit_bias(std::span<float> logits, const std::map<std::int32_t, float>& bias);

// All of the above as the config asks, plus EOS masking below min_new_tokens.
void apply_logits_processors(std::span<float> logits, const TokenHistory& history, const GenerationConfig& config);

}  // namespace kiln::genai
