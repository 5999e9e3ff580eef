#include "cli/generation_flags.hpp"

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "util/file_io.hpp"

namespace kiln::cli {

void add_generation_flags(CLI::App& cmd, GenerationFlags& f) {
  cmd.add_option("--max-new-tokens,-n", f.max_new_tokens, "Tokens to generate (default: the model's, else 128)");
  cmd.add_option("--max-length", f.max_length, "Prompt + generated tokens at most");
  cmd.add_option("--min-new-tokens", f.min_new_tokens, "EOS is masked until this many tokens exist");
  cmd.add_flag("--ignore-eos", f.ignore_eos, "Keep generating past end-of-sequence tokens");
  cmd.add_option("--eos-token-id", f.eos_token_ids, "End-of-sequence token id (repeatable; default: the model's)");
  cmd.add_option("--stop-token-id", f.stop_token_ids, "Also stop on this token id (repeatable)");
  cmd.add_option("--stop", f.stop_strings, "Stop when the text contains this string (repeatable)");
  cmd.add_flag("--include-stop-str", f.include_stop_str_in_output, "Keep the matched stop string in the output");
  cmd.add_flag("--do-sample", f.do_sample, "Sample (default: the model's; --temperature > 0 implies it)");
  cmd.add_option("--temperature", f.temperature, "Sampling temperature; 0 is greedy (default: the model's)")
      ->check(at_least(0));
  cmd.add_option("--top-k", f.top_k, "Keep the k most likely tokens (0: off)")->check(at_least(0));
  cmd.add_option("--top-p", f.top_p, "Keep the smallest set of tokens with this probability mass")
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--min-p", f.min_p, "Drop tokens below this fraction of the most likely one")
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--repetition-penalty", f.repetition_penalty, "HF repetition penalty (1: off)");
  cmd.add_option("--presence-penalty", f.presence_penalty, "OpenAI presence penalty in [-2, 2]");
  cmd.add_option("--frequency-penalty", f.frequency_penalty, "OpenAI frequency penalty in [-2, 2]");
  cmd.add_option("--no-repeat-ngram-size", f.no_repeat_ngram_size, "Never repeat an n-gram of this size");
  cmd.add_option("--seed", f.seed, "Random seed for sampling");
  cmd.add_option("--num-return-sequences", f.num_return_sequences, "Answers to return (samples or best beams)");
  cmd.add_option("--num-beams", f.num_beams, "Beam search with this many beams (1: off)");
  cmd.add_option("--length-penalty", f.length_penalty, "Beam score = log-probability / length^penalty");
  cmd.add_option("--early-stopping", f.early_stopping, "Beam search stop rule: true, false (heuristic), never")
      ->check(CLI::IsMember({"true", "false", "never", "early", "heuristic"}));
  cmd.add_option("--logprobs", f.logprobs, "Print each token's log-probability and this many alternatives");
  cmd.add_option("--apply-chat-template", f.apply_chat_template,
                 "Render the prompt as a user message with the tokenizer's chat template (true/false)");
  cmd.add_option("--num-assistant-tokens", f.num_assistant_tokens,
                 "Speculative decoding: candidates per step (default 5 with --draft)");
  cmd.add_option("--assistant-confidence-threshold", f.assistant_confidence_threshold,
                 "Speculative decoding: the draft proposes while its confidence stays above this");
  cmd.add_option("--max-ngram-size", f.max_ngram_size, "Prompt-lookup decoding with n-grams up to this size");
  auto* schema =
      cmd.add_option("--json-schema", f.json_schema_file, "The output is JSON valid against this schema file");
  auto* grammar = cmd.add_option("--grammar", f.grammar_file, "The output follows this GBNF grammar file (rule root)");
  auto* regex = cmd.add_option("--regex", f.regex, "The whole output matches this regular expression");
  auto* choice = cmd.add_option("--choice", f.choices, "The output is exactly one of these strings (repeatable)");
  auto* json = cmd.add_flag("--json-object", f.json_object, "The output is a JSON object");
  for (auto* a : {schema, grammar, regex, choice, json}) {
    for (auto* b : {schema, grammar, regex, choice, json}) {
      if (a != b) a->excludes(b);
    }
  }
}

namespace {

std::optional<StructuredOutputConfig> structured_output(const GenerationFlags& f) {
  StructuredOutputConfig s;
  if (f.json_schema_file) {
    s.json_schema = read_file(*f.json_schema_file);
  } else if (f.grammar_file) {
    s.grammar = read_file(*f.grammar_file);
  } else if (f.regex) {
    s.regex = *f.regex;
  } else if (!f.choices.empty()) {
    s.choice = f.choices;
  } else if (f.json_object) {
    s.json_object = true;
  } else {
    return std::nullopt;
  }
  return s;
}

}  // namespace

void add_pipeline_flags(CLI::App& cmd, PipelineFlags& f) {
  cmd.add_option("--model,-m", f.model, "Model directory or GGUF file (default: $KILN_MODEL or the embedded model)");
  cmd.add_option("--draft", f.draft, "Draft model directory for speculative decoding (same tokenizer)");
  cmd.add_flag("--no-adaptive-draft", f.no_adaptive_draft,
               "Always speculate, even when the draft does not pay (for measurements)");
  cmd.add_option("--context", f.context, "KV cache capacity in tokens (capped by the model)")
      ->capture_default_str()
      ->check(at_least(1));
  add_device_flags(cmd, f.device);
}

GenerationConfig apply_generation_flags(const GenerationFlags& f, GenerationConfig c,
                                        std::int64_t default_max_new_tokens) {
  if (f.max_new_tokens) c.max_new_tokens = *f.max_new_tokens;
  if (f.max_length) c.max_length = *f.max_length;
  if (!c.max_new_tokens && !c.max_length) c.max_new_tokens = default_max_new_tokens;
  if (f.min_new_tokens) c.min_new_tokens = *f.min_new_tokens;
  c.ignore_eos = c.ignore_eos || f.ignore_eos;
  if (!f.eos_token_ids.empty()) c.eos_token_ids = {f.eos_token_ids.begin(), f.eos_token_ids.end()};
  c.stop_token_ids.insert(f.stop_token_ids.begin(), f.stop_token_ids.end());
  c.stop_strings.insert(f.stop_strings.begin(), f.stop_strings.end());
  c.include_stop_str_in_output = c.include_stop_str_in_output || f.include_stop_str_in_output;
  if (f.do_sample) c.do_sample = true;
  if (f.temperature) {
    // Temperature 0 means greedy, as in OpenAI's API.
    c.do_sample = *f.temperature > 0;
    if (c.do_sample) c.temperature = *f.temperature;
  }
  if (f.top_k) c.top_k = *f.top_k;
  if (f.top_p) c.top_p = *f.top_p;
  if (f.min_p) c.min_p = *f.min_p;
  if (f.repetition_penalty) c.repetition_penalty = *f.repetition_penalty;
  if (f.presence_penalty) c.presence_penalty = *f.presence_penalty;
  if (f.frequency_penalty) c.frequency_penalty = *f.frequency_penalty;
  if (f.no_repeat_ngram_size) c.no_repeat_ngram_size = *f.no_repeat_ngram_size;
  if (f.seed) c.rng_seed = *f.seed;
  if (f.num_return_sequences) c.num_return_sequences = *f.num_return_sequences;
  if (f.num_beams) c.num_beams = *f.num_beams;
  if (f.length_penalty) c.length_penalty = *f.length_penalty;
  if (f.early_stopping) c.early_stopping = parse_stop_criteria(*f.early_stopping);
  if (f.logprobs) c.logprobs = *f.logprobs;
  if (f.apply_chat_template) c.apply_chat_template = *f.apply_chat_template;
  if (f.num_assistant_tokens) c.num_assistant_tokens = *f.num_assistant_tokens;
  if (f.assistant_confidence_threshold) c.assistant_confidence_threshold = *f.assistant_confidence_threshold;
  if (f.max_ngram_size) c.max_ngram_size = *f.max_ngram_size;
  if (auto constraint = structured_output(f)) c.structured_output_config = std::move(*constraint);
  c.validate();
  return c;
}

PipelineProperties pipeline_properties(const PipelineFlags& f) {
  PipelineProperties p;
  p.context_tokens = f.context;
  p.adaptive_speculation = !f.no_adaptive_draft;
  p.device_properties = device_property_map(f.device);
  if (!f.draft.empty()) p.draft = draft_model(f.draft, f.device.device);
  return p;
}

std::filesystem::path model_dir(const PipelineFlags& f) {
  return f.model.empty() ? default_model_dir() : std::filesystem::path(f.model);
}

LLMPipeline open_pipeline(const PipelineFlags& f) {
  return LLMPipeline(model_dir(f), f.device.device, pipeline_properties(f));
}

std::string format_perf_metrics(const PerfMetrics& m) {
  const auto ms = [](MeanStd v) { return fmt::format("{:.2f} ± {:.2f} ms", v.mean, v.std); };
  std::string line = fmt::format(
      "load {:.1f} ms | prompt {:.0f} tokens ({:.0f} computed) | TTFT {} | {:.0f} tokens | "
      "TPOT {} | {:.1f} tokens/s",
      m.load_time_ms, m.get_num_input_tokens().mean, m.get_num_prefilled_tokens().mean, ms(m.get_ttft()),
      m.get_num_generated_tokens().mean, ms(m.get_tpot()), m.get_throughput().mean);
  if (m.raw.num_proposed_tokens > 0) {
    line += fmt::format(" | draft acceptance {:.1f}% ({} of {})",
                        100.0 * double(m.raw.num_accepted_tokens) / double(m.raw.num_proposed_tokens),
                        m.raw.num_accepted_tokens, m.raw.num_proposed_tokens);
  }
  return line;
}

}  // namespace kiln::cli
