// The core loop every generation runs through: schedule → execute → sample → update. Requests
// (token ids in, token ids out) are admitted, the scheduler picks each one's tokens for the
// step, the model runs them as one ragged batch, each request samples its next token and checks
// its stop conditions. A single generate() is a batch of one; continuous batching is many.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "genai/sampler.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/streamer.hpp"
#include "kv/block_table.hpp"
#include "models/language_model.hpp"
#include "sched/scheduler.hpp"
#include "util/clock.hpp"

namespace kiln::genai {

using RequestId = std::int64_t;

enum class FinishReason : std::uint8_t {
  kNone,       // still running
  kStop,       // EOS, a stop token, or the callback said STOP
  kLength,     // max_new_tokens / max_length / the context is full
  kCancelled,  // the callback said CANCEL or the request was aborted
};

// Called with every generated token; its answer may end the request.
using TokenCallback = std::function<StreamingStatus(std::int32_t token)>;

struct RequestTimings {
  double queued_ms = 0;       // engine clock when the request was added
  double first_token_ms = 0;  // engine clock when its first token was sampled (0: none yet)
  double finished_ms = 0;
};

struct RequestState {
  std::vector<std::int32_t> tokens;  // prompt followed by generated tokens
  std::int64_t num_prompt = 0;
  std::int64_t num_computed = 0;     // tokens with cached keys/values
  std::int64_t max_new_tokens = 0;   // resolved from the config and the context
  GenerationConfig config;
  Sampler sampler;
  kv::BlockTable blocks;
  TokenCallback on_token;
  FinishReason finish_reason = FinishReason::kNone;
  RequestTimings timings;

  std::int64_t num_generated() const { return static_cast<std::int64_t>(tokens.size()) - num_prompt; }
  std::span<const std::int32_t> generated() const {
    return std::span(tokens).subspan(static_cast<std::size_t>(num_prompt));
  }
};

class Engine {
 public:
  // The KV block pool spans the model's whole KV cache.
  explicit Engine(models::LanguageModel& model, sched::SchedulerConfig scheduler_config = {});

  // Admits a request. Throws kiln::Error if the prompt is empty or does not fit the context.
  RequestId add_request(std::vector<std::int32_t> prompt, const GenerationConfig& config, TokenCallback on_token = {});

  // One step over every unfinished request. Does nothing when none is left.
  void step();

  // Runs steps until every request has finished.
  void run_until_idle();

  bool has_unfinished_requests() const;
  const RequestState& request(RequestId id) const;
  // Forgets a finished request (frees its record).
  void release(RequestId id);
  // Ends a request now (FinishReason::kCancelled) and frees its blocks.
  void abort(RequestId id);

  // Tokens one sequence may hold: the model's context, bounded by the KV cache.
  std::int64_t max_context_tokens() const { return max_context_tokens_; }
  const Stopwatch& clock() const { return clock_; }

 private:
  void finish(RequestState& r, FinishReason reason);
  void sample_and_update(RequestState& r, std::span<float> logits);

  models::LanguageModel& model_;
  kv::BlockPool pool_;
  sched::Scheduler scheduler_;
  std::int64_t max_context_tokens_;
  std::map<RequestId, std::unique_ptr<RequestState>> requests_;  // ordered by id = arrival
  RequestId next_id_ = 0;
  Stopwatch clock_;
  // Per-step scratch, reused.
  std::vector<RequestState*> running_;
  std::vector<sched::SchedulableSequence> schedulable_;
  std::vector<models::SequenceChunk> batch_;
  models::StepOutput output_;
};

}  // namespace kiln::genai
