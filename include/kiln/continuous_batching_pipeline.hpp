// Many users at once, as OpenVINO GenAI's ContinuousBatchingPipeline serves them:
//   kiln::ContinuousBatchingPipeline pipe(model_dir, kiln::SchedulerConfig{}, "CPU");
//   kiln::GenerationHandle h = pipe.add_request(7, "The Sun is", config);   // any thread
//   for (auto out = h->read(); !out.empty(); out = h->read()) std::cout << out[0].text;
// One engine thread owns the model and its KV cache and steps every request in flight as one
// ragged batch; add_request() and the handles talk to it through queues, so callers never wait
// for each other and a reader that falls behind slows no one. Thread-safe: every method may be
// called from any thread. See docs/ARCHITECTURE.md ("Serving many users").
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kiln/api.hpp"
#include "kiln/chat_history.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/generation_handle.hpp"
#include "kiln/kv_cache_events.hpp"
#include "kiln/llm_pipeline.hpp"
#include "kiln/scheduler_config.hpp"
#include "kiln/streamer.hpp"
#include "kiln/tokenizer.hpp"

namespace kiln {

// The engine's state, sampled after its latest step. Names follow OpenVINO GenAI's
// PipelineMetrics where it has them.
struct PipelineMetrics {
  std::int64_t requests = 0;            // added and not yet ended
  std::int64_t scheduled_requests = 0;  // running: admitted by the scheduler
  std::int64_t waiting_requests = 0;    // queued, waiting for KV blocks, or preempted
  double cache_usage = 0;               // % of KV blocks in use after the latest step
  double max_cache_usage = 0;           // % at the fullest step
  double avg_cache_usage = 0;           // % averaged over steps
  std::int64_t num_kv_blocks = 0;
  std::int64_t num_steps = 0;
  std::int64_t num_preemptions = 0;             // sequences whose KV was freed for room (they recompute)
  std::int64_t prefix_cache_queries = 0;        // prompt tokens looked up in the prefix cache
  std::int64_t prefix_cache_hits = 0;           // of those, found there (not computed again)
  std::int64_t num_prompt_tokens = 0;           // of requests added
  std::int64_t num_computed_prompt_tokens = 0;  // of ended requests' prompts, computed (not reused)
  std::int64_t num_generated_tokens = 0;        // by ended requests, over all their sequences
  double inference_duration_ms = 0;             // time the engine spent in steps
};

// One request's result from generate(): its sequences, best first.
struct GenerationResult {
  std::uint64_t request_id = 0;
  std::vector<std::string> texts;
  std::vector<std::vector<std::int32_t>> tokens;
  std::vector<float> scores;
  std::vector<GenerationFinishReason> finish_reasons;
  std::vector<std::vector<TokenLogprob>> logprobs;  // empty unless GenerationConfig::logprobs > 0
  GenerationStatus status = GenerationStatus::RUNNING;
  std::string error;  // when status is FAILED
  // This request's: tokenization (text prompts), time to first token and duration from the
  // generate() call, token counts (prefilled: not found in the prefix cache), inter-token latencies.
  PerfMetrics perf_metrics;
};

class KILN_API ContinuousBatchingPipeline {
 public:
  // Loads `models_path` for `device` as LLMPipeline does; `scheduler_config` replaces
  // properties.scheduler. The draft model, when given, serves every request that speculates.
  ContinuousBatchingPipeline(const std::filesystem::path& models_path, const SchedulerConfig& scheduler_config,
                             const std::string& device = "CPU", PipelineProperties properties = {});
  ~ContinuousBatchingPipeline();  // requests still in flight end as CANCEL
  ContinuousBatchingPipeline(const ContinuousBatchingPipeline&) = delete;
  ContinuousBatchingPipeline& operator=(const ContinuousBatchingPipeline&) = delete;

  // Queues a request; its output arrives through the handle. A bad request throws kiln::Error
  // here (naming the field or limit: a prompt longer than the context, a bad config, an id that
  // is already in flight) and the others are untouched. A plain-text prompt goes through the
  // chat template when config.apply_chat_template (and the tokenizer has one).
  GenerationHandle add_request(std::uint64_t request_id, const std::string& prompt, const GenerationConfig& config);
  GenerationHandle add_request(std::uint64_t request_id, std::vector<std::int32_t> input_ids,
                               const GenerationConfig& config);
  GenerationHandle add_request(std::uint64_t request_id, const ChatHistory& history, const GenerationConfig& config);

  // The engine steps by itself while there is work; step() waits for its next step to end (at
  // once when there is no work), so loops written for OpenVINO GenAI's step() still work.
  void step();
  bool has_non_finished_requests() const;

  // Every prompt with its config (one config for all, or one each), generated together; the
  // results in order. A streamer (one prompt only) runs on this calling thread; STOP or CANCEL
  // from it, or an exception it throws, ends that request only (the exception is rethrown
  // here). In a chat (start_chat), the one prompt is the next user turn.
  std::vector<GenerationResult> generate(const std::vector<std::string>& prompts,
                                         const std::vector<GenerationConfig>& configs,
                                         const StreamerVariant& streamer = std::monostate{});
  std::vector<GenerationResult> generate(const std::vector<std::vector<std::int32_t>>& input_ids,
                                         const std::vector<GenerationConfig>& configs,
                                         const StreamerVariant& streamer = std::monostate{});
  // Each conversation's next assistant answer, rendered with the chat template (stateless: the
  // chat session of start_chat is neither used nor changed).
  std::vector<GenerationResult> generate(const std::vector<ChatHistory>& histories,
                                         const std::vector<GenerationConfig>& configs,
                                         const StreamerVariant& streamer = std::monostate{});

  // Cancels the requests of the generate() calls under way (those made on thread `caller` when
  // it is given); their results end as CANCEL with what was generated. Requests added by
  // add_request are not touched. For a caller that must stop a generate() from another thread,
  // as the Python module does on Ctrl-C.
  void cancel_generate(std::optional<std::thread::id> caller = std::nullopt);

  void start_chat(const std::string& system_message = "");
  void finish_chat();
  ChatHistory get_chat_history() const;  // empty outside a chat

  const Tokenizer& get_tokenizer() const;
  GenerationConfig get_config() const;  // the model's generation defaults
  // The longest sequence (prompt and answer) a request may have: the model's and the KV cache's
  // limit, and PipelineProperties::context_tokens.
  std::int64_t get_max_context_tokens() const;
  PipelineMetrics get_metrics() const;

  // With PipelineProperties::kv_cache_events: what the prefix cache stored and forgot since the
  // last call, one batch per engine step that changed it, oldest first (the first starts with
  // "all blocks cleared"). Waits up to `timeout` for a batch; empty when none came. One reader
  // (a publisher thread) takes them all. Without kv_cache_events it waits and returns nothing.
  std::vector<KvCacheEventBatch> wait_kv_cache_events(std::chrono::milliseconds timeout);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
