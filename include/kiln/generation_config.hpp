// How to generate: lengths, stopping, and the sampling distribution. Field names follow
// Hugging Face / OpenVINO GenAI's GenerationConfig so users can carry their settings over.
// Defaults come from the model's generation_config.json (from_model_defaults); validate()
// rejects contradictory or out-of-range values with a message naming the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace kiln {

struct GenerationConfig {
  // Length. max_new_tokens wins over max_length when both are set; with neither, generation
  // runs to the end of the model's context.
  std::optional<std::int64_t> max_new_tokens;
  std::optional<std::int64_t> max_length;  // prompt + generated tokens
  std::int64_t min_new_tokens = 0;         // EOS is masked until this many tokens exist

  // Stopping.
  bool ignore_eos = false;
  std::set<std::int32_t> eos_token_ids;   // from the model unless set
  std::set<std::int32_t> stop_token_ids;  // stop on these too (kept out of the text)

  // Sampling. do_sample=false is greedy decoding.
  bool do_sample = false;
  double temperature = 1.0;
  std::int64_t top_k = 0;  // 0: off
  double top_p = 1.0;      // 1: off
  double min_p = 0.0;      // 0: off
  double repetition_penalty = 1.0;  // HF: divides positive / multiplies negative logits of seen tokens
  double presence_penalty = 0.0;    // OpenAI: subtracted once from every generated token's logit
  double frequency_penalty = 0.0;   // OpenAI: subtracted per occurrence in the generated tokens
  std::int64_t no_repeat_ngram_size = 0;
  std::uint64_t rng_seed = 0;

  // Throws kiln::Error naming the first bad field.
  void validate() const;

  // How many tokens may follow a prompt of this length (never below 0).
  std::int64_t new_token_limit(std::int64_t prompt_tokens, std::int64_t context_tokens) const;

  // The model's defaults: generation_config.json's fields where present (do_sample,
  // temperature, top_k, top_p, min_p, repetition_penalty, max_new_tokens, max_length,
  // eos_token_id, ...), eos from config.json otherwise.
  static GenerationConfig from_model_defaults(const nlohmann::json& generation_config_json,
                                              const std::set<std::int32_t>& model_eos_ids);
};

}  // namespace kiln
