// Command-line flags shared by `kiln run` and `kiln chat`: one flag per GenerationConfig field
// (unset flags keep the model's defaults from generation_config.json), the pipeline's model,
// draft model and context, and the one-line perf-metrics summary both print.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/device_flags.hpp"
#include "kiln/llm_pipeline.hpp"

namespace kiln::cli {

struct GenerationFlags {
  std::optional<std::int64_t> max_new_tokens, max_length, min_new_tokens;
  bool ignore_eos = false;
  std::vector<std::int32_t> eos_token_ids, stop_token_ids;
  std::vector<std::string> stop_strings;
  bool include_stop_str_in_output = false;
  bool do_sample = false;
  std::optional<double> temperature, top_p, min_p, repetition_penalty, presence_penalty, frequency_penalty;
  std::optional<std::int64_t> top_k, no_repeat_ngram_size;
  std::optional<std::uint64_t> seed;
  std::optional<std::int64_t> num_return_sequences, num_beams;
  std::optional<double> length_penalty;
  std::optional<std::string> early_stopping;
  std::optional<std::int64_t> logprobs;
  std::optional<bool> apply_chat_template;
  std::optional<std::int64_t> num_assistant_tokens, max_ngram_size;
  std::optional<double> assistant_confidence_threshold;
  // Structured output (at most one): files are read when the config is built.
  std::optional<std::filesystem::path> json_schema_file, grammar_file;
  std::optional<std::string> regex;
  std::vector<std::string> choices;
  bool json_object = false;
};

struct PipelineFlags {
  std::string model;
  std::string draft;
  std::int64_t context = 4096;
  bool no_adaptive_draft = false;
  DeviceFlags device;
};

void add_generation_flags(CLI::App& cmd, GenerationFlags& flags);
void add_pipeline_flags(CLI::App& cmd, PipelineFlags& flags);

// The model's defaults with every flag that was given applied; `default_max_new_tokens` when
// neither the flags nor the model limit the length.
GenerationConfig apply_generation_flags(const GenerationFlags& flags, GenerationConfig config,
                                        std::int64_t default_max_new_tokens);

PipelineProperties pipeline_properties(const PipelineFlags& flags);
std::filesystem::path model_dir(const PipelineFlags& flags);  // --model, else the default model
LLMPipeline open_pipeline(const PipelineFlags& flags);

// "load 12.0 ms | prompt 9 tokens | TTFT 3.1 ± 0.0 ms | 32 tokens | TPOT 1.20 ± 0.10 ms | ..."
std::string format_perf_metrics(const PerfMetrics& metrics);

}  // namespace kiln::cli
