#include "genai/logits_processors.hpp"

#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace kiln::genai {
namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

bool in_vocab(std::int32_t id, std::span<float> logits) {
  return id >= 0 && static_cast<std::size_t>(id) < logits.size();
}

}  // namespace

void apply_repetition_penalty(std::span<float> logits, std::span<const std::int32_t> seen, double penalty) {
  if (penalty == 1.0) return;
  std::unordered_set<std::int32_t> done;
  for (std::int32_t id : seen) {
    if (!in_vocab(id, logits) || !done.insert(id).second) continue;
    float& l = logits[static_cast<std::size_t>(id)];
    l = l > 0 ? static_cast<float>(l / penalty) : static_cast<float>(l * penalty);
  }
}

void apply_presence_frequency_penalty(std::span<float> logits, std::span<const std::int32_t> generated, double presence,
                                      double frequency) {
  if (presence == 0.0 && frequency == 0.0) return;
  std::unordered_map<std::int32_t, std::int64_t> counts;
  for (std::int32_t id : generated) {
    if (in_vocab(id, logits)) ++counts[id];
  }
  for (const auto& [id, count] : counts) {
    logits[static_cast<std::size_t>(id)] -= static_cast<float>(presence + frequency * static_cast<double>(count));
  }
}

void apply_no_repeat_ngram(std::span<float> logits, std::span<const std::int32_t> tokens, std::int64_t n) {
  const auto len = static_cast<std::int64_t>(tokens.size());
  if (n <= 0 || len + 1 < n) return;
  // The n-1 most recent tokens; any earlier occurrence of them bans the token that followed.
  const auto prefix = tokens.subspan(static_cast<std::size_t>(len - (n - 1)));
  for (std::int64_t start = 0; start + n <= len; ++start) {
    if (std::equal(prefix.begin(), prefix.end(), tokens.begin() + start)) {
      const std::int32_t banned = tokens[static_cast<std::size_t>(start + n - 1)];
      if (in_vocab(banned, logits)) logits[static_cast<std::size_t>(banned)] = kMasked;
    }
  }
}

void apply_logit_bias(std::span<float> logits, const std::map<std::int32_t, float>& bias) {
  for (const auto& [id, b] : bias) {
    if (in_vocab(id, logits)) logits[static_cast<std::size_t>(id)] += b;
  }
}

void apply_logits_processors(std::span<float> logits, const TokenHistory& history, const GenerationConfig& config) {
  apply_repetition_penalty(logits, history.tokens, config.repetition_penalty);
  apply_presence_frequency_penalty(logits, history.generated(), config.presence_penalty, config.frequency_penalty);
  apply_no_repeat_ngram(logits, history.tokens, config.no_repeat_ngram_size);
  if (!config.ignore_eos && static_cast<std::int64_t>(history.generated().size()) < config.min_new_tokens) {
    for (std::int32_t eos : config.eos_token_ids) {
      if (in_vocab(eos, logits)) logits[static_cast<std::size_t>(eos)] = kMasked;
    }
  }
  apply_logit_bias(logits, config.logit_bias);
}

}  // namespace kiln::genai
