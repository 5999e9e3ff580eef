// kiln's text-generation API, named as OpenVINO GenAI names it so its users feel at home:
//   kiln::LLMPipeline pipe(model_dir, "CPU");
//   std::cout << pipe.generate("The Sun is", config, streamer).texts[0];
// One pipeline holds a model (and optionally a draft model for speculative decoding), its
// tokenizer, its generation defaults and a chat session. It runs on a ContinuousBatchingPipeline
// (one engine thread; see docs/ARCHITECTURE.md). Not thread-safe: one call at a time (cancel()
// excepted).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/api.hpp"
#include "kiln/chat_history.hpp"
#include "kiln/decoded_results.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/scheduler_config.hpp"
#include "kiln/streamer.hpp"
#include "kiln/tokenizer.hpp"

namespace kiln {

struct DraftModel {
  std::filesystem::path dir;
  std::string device = "CPU";
};

// The draft model for speculative decoding (OpenVINO GenAI's ov::genai::draft_model); it must
// use the same tokenizer as the main model.
inline DraftModel draft_model(std::filesystem::path dir, std::string device = "CPU") {
  return {std::move(dir), std::move(device)};
}

struct PipelineProperties {
  std::optional<DraftModel> draft;
  SchedulerConfig scheduler;
  std::int64_t context_tokens = 4096;  // longest sequence (prompt + answer); capped by the model
  // KV cache size when the SchedulerConfig names none (num_kv_blocks and cache_size 0): this many
  // sequences at full context, but within half the memory available at load (and at least one
  // context). 0: 2 for LLMPipeline, SchedulerConfig::max_num_seqs for ContinuousBatchingPipeline.
  // Beams and samples share their prompt's blocks, so 4 beams fit in far less than 4 contexts;
  // when the cache runs out the newest sequence is preempted and recomputed later, never lost.
  std::int64_t kv_cache_sequences = 0;
  std::int64_t kv_block_size = 16;  // tokens per KV block
  // Speculative decoding falls back to plain steps when it does not pay (see
  // SpeculationController); false always proposes num_assistant_tokens.
  bool adaptive_speculation = true;
  // Record the prefix cache's KV cache events (kiln/kv_cache_events.hpp) for
  // ContinuousBatchingPipeline::wait_kv_cache_events(); needs scheduler.enable_prefix_caching.
  bool kv_cache_events = false;
  // Device properties by name, as OpenVINO takes them ("KV_CACHE_PRECISION" -> "u8",
  // "CACHE_DIR" -> "/tmp/kiln-cache", ...); an unknown name or bad value is an error listing
  // what is accepted. The draft model is compiled with the same ones.
  std::map<std::string, std::string> device_properties;
};

class KILN_API LLMPipeline {
 public:
  // Loads `model_dir` (an HF checkpoint or a kiln model directory) for `device`: "CPU" (compiled),
  // "GPU" or "GPU.<n>" (OpenCL) or "REFERENCE" (the scalar oracle).
  // Throws kiln::Error naming the directory, the device or the property at fault; a draft model
  // whose tokenizer differs from the main model's is rejected here.
  LLMPipeline(const std::filesystem::path& model_dir, const std::string& device = "CPU",
              const PipelineProperties& properties = {});
  ~LLMPipeline();
  LLMPipeline(LLMPipeline&&) noexcept;
  LLMPipeline& operator=(LLMPipeline&&) noexcept;

  // A continuation of `prompt` (rendered with the chat template when config.apply_chat_template
  // and the tokenizer has one; in a chat session, the next user turn). `config` defaults to
  // get_generation_config(); an empty eos_token_ids means the model's. The streamer sees the
  // text (or tokens) as it is generated; it needs num_beams = num_return_sequences = 1.
  DecodedResults generate(const std::string& prompt, const std::optional<GenerationConfig>& config = std::nullopt,
                          const StreamerVariant& streamer = std::monostate{});
  // Several prompts, generated together (continuous batching); no streamer.
  DecodedResults generate(const std::vector<std::string>& prompts,
                          const std::optional<GenerationConfig>& config = std::nullopt,
                          const StreamerVariant& streamer = std::monostate{});
  // Prompts given as token ids (no chat template, outside the chat session); no streamer unless
  // one prompt.
  DecodedResults generate(const std::vector<std::vector<std::int32_t>>& input_ids,
                          const std::optional<GenerationConfig>& config = std::nullopt,
                          const StreamerVariant& streamer = std::monostate{});
  // The assistant's answer to a whole conversation, rendered with the chat template. Stateless:
  // the pipeline's own chat session is neither used nor changed.
  DecodedResults generate(const ChatHistory& history, const std::optional<GenerationConfig>& config = std::nullopt,
                          const StreamerVariant& streamer = std::monostate{});

  // The one call that may come from another thread while generate() runs: ends that call's
  // sequences as CANCEL, with what they had generated (ContinuousBatchingPipeline::cancel_generate).
  void cancel();

  GenerationConfig get_generation_config() const;
  void set_generation_config(const GenerationConfig& config);  // validated
  const Tokenizer& get_tokenizer() const;

  // Chat: generate(prompt) calls become user turns of one conversation whose history is kept.
  // The prefix cache (SchedulerConfig::enable_prefix_caching, on by default) still holds the
  // earlier turns' keys and values, so a turn computes only its new tokens (from the block where
  // the cached ones end). A turn the streamer ends with CANCEL is dropped from the history; STOP
  // keeps what was generated.
  void start_chat(const std::string& system_message = "");
  void finish_chat();  // forgets the history (its KV blocks stay in the prefix cache until needed)
  bool in_chat() const;
  const ChatHistory& get_chat_history() const;

  // Load time and every generate() call's metrics since construction (or the last reset).
  const PerfMetrics& get_perf_metrics() const;
  void reset_perf_metrics();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
