// How to generate: lengths, stopping, the sampling distribution, beam search and speculative
// decoding. Field names follow Hugging Face / OpenVINO GenAI's GenerationConfig so users can
// carry their settings over. Defaults come from the model's generation_config.json
// (from_model_defaults); validate() rejects contradictory or out-of-range values with a message
// naming the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/api.hpp"

namespace kiln {

// When beam search stops (HF's early_stopping: true / false / "never").
enum class StopCriteria : std::uint8_t {
  EARLY,      // true: as soon as num_beams hypotheses are finished
  HEURISTIC,  // false: when no running beam is likely to beat the worst finished one
  NEVER,      // "never": only when no running beam can beat it, whatever the length
};

// Constrained generation: the output is a sentence of one grammar, given as exactly one of these
// (OpenVINO GenAI's StructuredOutputConfig, with vLLM's choice and OpenAI's json_object). The
// model's stop tokens end the output only where the grammar accepts it as a whole.
// One tagged JSON value: `begin`, then JSON valid against `json_schema`, then `end`. A tool call
// is one: begin "<tool_call>\n{\"name\": \"f\", \"arguments\": ", the function's parameters,
// end "}\n</tool_call>".
struct KILN_API StructuralTag {
  std::string begin;
  std::string json_schema;
  std::string end;
};

struct KILN_API StructuredOutputConfig {
  std::optional<std::string> json_schema;  // JSON Schema text
  std::optional<std::string> regex;        // the whole output matches it
  std::optional<std::string> grammar;      // GBNF (llama.cpp's dialect); the rule `root` is the output
  std::vector<std::string> choice;         // the output is exactly one of these strings
  bool json_object = false;                // any JSON object (OpenAI's response_format json_object)
  // Without triggers the output is exactly one of these tags. With triggers (OpenVINO GenAI's
  // StructuralTagsConfig) it is free text in which each trigger, once written, must go on as one
  // of the tags whose begin starts with it; then free text again. A Hermes-style tool call:
  // trigger "<tool_call>", one tag per tool.
  std::vector<StructuralTag> structural_tags;
  std::vector<std::string> triggers;

  // Throws kiln::Error unless exactly one is set.
  void validate() const;
};

struct KILN_API GenerationConfig {
  // Length. max_new_tokens wins over max_length when both are set; with neither, generation
  // runs to the end of the model's context.
  std::optional<std::int64_t> max_new_tokens;
  std::optional<std::int64_t> max_length;  // prompt + generated tokens
  std::int64_t min_new_tokens = 0;         // EOS is masked until this many tokens exist

  // Stopping.
  bool ignore_eos = false;
  std::set<std::int32_t> eos_token_ids;   // from the model unless set
  std::set<std::int32_t> stop_token_ids;  // stop on these too (kept out of the text)
  // Stop when the text contains one of these; they match across token boundaries and are cut
  // from the output unless include_stop_str_in_output.
  std::set<std::string> stop_strings;
  bool include_stop_str_in_output = false;
  // The output text leaves special tokens out (as OpenVINO GenAI's streamers and vLLM do);
  // false keeps them, for parsers that look for markers such as Mistral's [TOOL_CALLS].
  bool skip_special_tokens = true;

  // Sampling. do_sample=false is greedy decoding.
  bool do_sample = false;
  double temperature = 1.0;
  std::int64_t top_k = 0;           // 0: off
  double top_p = 1.0;               // 1: off
  double min_p = 0.0;               // 0: off
  double repetition_penalty = 1.0;  // HF: divides positive / multiplies negative logits of seen tokens
  double presence_penalty = 0.0;    // OpenAI: subtracted once from every generated token's logit
  double frequency_penalty = 0.0;   // OpenAI: subtracted per occurrence in the generated tokens
  // OpenAI: added to the token's logit before sampling (-100 bans it, 100 all but forces it).
  std::map<std::int32_t, float> logit_bias;
  std::int64_t no_repeat_ngram_size = 0;
  std::uint64_t rng_seed = 0;

  // Several answers: independent samples (do_sample) or the best finished beams (num_beams > 1).
  std::int64_t num_return_sequences = 1;

  // Beam search (HF semantics): a hypothesis' score is its summed log-probability divided by
  // (generated length)^length_penalty.
  std::int64_t num_beams = 1;
  double length_penalty = 1.0;
  StopCriteria early_stopping = StopCriteria::HEURISTIC;

  // Log-probabilities: 0 returns none; n > 0 returns each generated token's log-probability and
  // the n most likely alternatives (after the logits processors, before temperature).
  std::int64_t logprobs = 0;

  // A plain-text prompt is wrapped as one user message and rendered with the tokenizer's chat
  // template (when it has one). Chat sessions and chat histories always use the template.
  bool apply_chat_template = true;

  // Speculative decoding with a draft model: the draft proposes num_assistant_tokens tokens a
  // step, or, with assistant_confidence_threshold > 0, proposes until its top probability drops
  // below the threshold (at most kMaxAssistantTokens). Prompt-lookup decoding: candidates are
  // copied from the earlier text that follows an occurrence of the last n tokens,
  // n = max_ngram_size down to 1 (on when max_ngram_size > 0 and there is no draft model).
  std::int64_t num_assistant_tokens = 0;
  double assistant_confidence_threshold = 0.0;
  std::int64_t max_ngram_size = 0;

  // The output follows a grammar (JSON schema, regex, GBNF, choice); nullopt: free text.
  std::optional<StructuredOutputConfig> structured_output_config;

  static constexpr std::int64_t kMaxAssistantTokens = 16;
  static constexpr std::int64_t kMaxLogprobs = 20;    // OpenAI's top_logprobs limit
  static constexpr std::int64_t kMaxSequences = 256;  // num_beams, num_return_sequences

  // Throws kiln::Error naming the first bad field.
  void validate() const;

  // How many tokens may follow a prompt of this length (never below 0).
  std::int64_t new_token_limit(std::int64_t prompt_tokens, std::int64_t context_tokens) const;

  // Whether generating `token` ends a sequence: an EOS (unless ignore_eos) or a stop token.
  bool is_stop_token(std::int32_t token) const {
    return (!ignore_eos && eos_token_ids.contains(token)) || stop_token_ids.contains(token);
  }
  bool is_beam_search() const { return num_beams > 1; }
  bool is_prompt_lookup() const { return max_ngram_size > 0; }
  // Candidates a speculative step proposes at most (num_assistant_tokens, or the cap when the
  // confidence threshold decides).
  std::int64_t max_candidates() const {
    return assistant_confidence_threshold > 0 ? kMaxAssistantTokens : num_assistant_tokens;
  }

 private:
  void validate_sequences() const;
  void validate_speculative() const;
};

// "true"/"early", "false"/"heuristic", "never" (CLI and JSON spellings); throws otherwise.
KILN_API StopCriteria parse_stop_criteria(const std::string& text);

}  // namespace kiln
