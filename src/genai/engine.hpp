// The core loop every generation runs through: schedule → execute → sample → update. Requests
// (token ids in, token ids out) are admitted, the scheduler picks each sequence's tokens for the
// step, the model runs them as one ragged batch, each request samples its next token(s) and
// checks its stop conditions. A single generate() is a batch of one; continuous batching is many.
// Decoding strategies are parts of the same step, not loops of their own: speculative requests
// get candidates (from a draft model or the prompt) before scheduling and verify them from the
// step's logits (one row per candidate); beam groups and n-sample requests are several sequences
// sharing KV blocks, forked and freed as the search goes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "genai/request_state.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/tokenizer.hpp"
#include "kv/prefix_cache.hpp"
#include "models/language_model.hpp"
#include "sched/scheduler.hpp"
#include "util/clock.hpp"

namespace kiln::genai {

class DraftProposer;

struct EngineOptions {
  sched::SchedulerConfig scheduler{};
  // Stop strings and text streaming need it; requests without them work without one.
  const Tokenizer* tokenizer = nullptr;
  // Speculative decoding's draft model (same tokenizer as the main model).
  models::LanguageModel* draft_model = nullptr;
  // Let the SpeculationController fall back to plain steps when speculation does not pay;
  // false always proposes the configured number of candidates (tests, measurements).
  bool adaptive_speculation = true;
  // Longest sequence (prompt + answer); 0: as long as the model and the KV cache allow.
  std::int64_t max_context_tokens = 0;
  // Record the prefix cache's KV cache events (take_kv_cache_events()); needs prefix caching.
  bool kv_cache_events = false;
};

struct RequestOptions {
  TokenCallback on_token;  // single-sequence requests only
  // Scoring instead of generating (perplexity, compare): the prompt runs in chunks as any prompt
  // does, each chunk from `prompt_logits_from` on asks for all its logits (a chunk is cut there,
  // so none straddles it), on_prompt_logits receives them after each step, and the request ends
  // (LENGTH, no token generated) once the whole prompt is computed.
  PromptLogitsCallback on_prompt_logits;
  std::int64_t prompt_logits_from = 0;
};

class Engine {
 public:
  // The KV block pool spans the model's whole KV cache.
  explicit Engine(models::LanguageModel& model, sched::SchedulerConfig scheduler_config = {});
  Engine(models::LanguageModel& model, EngineOptions options);
  ~Engine();

  // Admits a request. Throws kiln::Error if the prompt is empty or does not fit the context, or
  // the config asks for something this engine cannot do (a draft model it lacks, stop strings
  // without a tokenizer).
  RequestId add_request(std::vector<std::int32_t> prompt, const GenerationConfig& config, TokenCallback on_token = {});
  RequestId add_request(std::vector<std::int32_t> prompt, const GenerationConfig& config, RequestOptions options);

  // One step over every unfinished request. Does nothing when none is left.
  void step();

  // Runs steps until every request has finished.
  void run_until_idle();

  // Throws kiln::Error as add_request would for this request. Reads only what construction
  // fixed, so any thread may call it while another steps the engine.
  void validate_request(const std::vector<std::int32_t>& prompt, const GenerationConfig& config,
                        const RequestOptions& options) const;

  // What the prefix cache stored and forgot since the last call (EngineOptions::kv_cache_events),
  // oldest first; the first call's events start with "all blocks cleared".
  std::vector<KvCacheEvent> take_kv_cache_events() { return pool_.take_events(); }

  // Prompt tokens whose keys and values the prefix cache holds now (0 with it off).
  std::int64_t cached_prefix_tokens(std::span<const std::int32_t> prompt) const;

  bool has_unfinished_requests() const;
  const RequestState& request(RequestId id) const;
  // Forgets a finished request (frees its record and any KV it kept).
  void release(RequestId id);
  // Ends an unfinished request now, with `reason` (STOP keeps what it generated, CANCEL too, but
  // marks the answer as unwanted), and frees its blocks. A finished request is left as it is.
  void end_request(RequestId id, GenerationFinishReason reason);

  // Tokens one sequence may hold: the model's context, bounded by the KV cache.
  std::int64_t max_context_tokens() const { return max_context_tokens_; }
  const models::LanguageModel& model() const { return model_; }
  const Stopwatch& clock() const { return clock_; }
  const Tokenizer* tokenizer() const { return tokenizer_; }
  bool has_draft_model() const { return drafter_ != nullptr; }
  std::int64_t num_free_kv_blocks() const { return pool_.num_free(); }
  std::int64_t num_kv_blocks() const { return pool_.num_blocks(); }

  struct Counters {
    std::int64_t steps = 0;                 // step() calls that ran the model
    std::int64_t preemptions = 0;           // sequences whose blocks were freed to make room (they recompute)
    std::int64_t prefix_cache_queries = 0;  // prompt tokens looked up in the prefix cache
    std::int64_t prefix_cache_hits = 0;     // of those, found (their keys and values reused)
  };
  const Counters& counters() const { return counters_; }
  // Unfinished requests admitted by the scheduler (running) and not yet, or preempted (waiting;
  // one may hold cached prefix blocks already).
  struct Occupancy {
    std::int64_t running = 0;
    std::int64_t waiting = 0;
  };
  Occupancy occupancy() const;

 private:
  struct ScheduledSequence {
    RequestState* request = nullptr;
    Sequence* sequence = nullptr;
  };

  void start_sequence(RequestState& r, std::vector<std::int32_t> prompt);
  void collect_running();
  // Prefix caching (engine_prefix_cache.cpp): a sequence without blocks takes the cached blocks
  // of its longest cached prefix; computed full blocks are put in the cache. The same for the
  // draft model's cache of a speculative sequence, in the draft's pool.
  void reuse_cached_prefix(RequestState& r, Sequence& s);
  void cache_computed_blocks(Sequence& s);
  void reuse_cached_draft_prefix(RequestState& r, Sequence& s);
  void cache_draft_blocks(Sequence& s);
  // The sequence's first `num_blocks` blocks as the cache names them (hashed as needed).
  kv::PrefixChain prefix_chain(Sequence& s, std::size_t num_blocks) const;
  void propose_candidates();
  sched::ScheduleOutput schedule();  // over scheduled_
  void execute(const sched::ScheduleOutput& plan);
  // engine_update.cpp: sample or verify, append, stop.
  void update_request(RequestState& r);
  void update_sequence(RequestState& r, Sequence& s);
  void fork_samples(RequestState& r);
  bool append_token(RequestState& r, Sequence& s, const TokenLogprob& token);
  void finish_sequence(RequestState& r, Sequence& s, GenerationFinishReason reason);
  void finish_request(RequestState& r);
  std::unique_ptr<TextStream> make_text_stream(const GenerationConfig& config) const;
  // engine_beams.cpp: one beam-search step over the request's beams, and its results.
  void update_beams(RequestState& r);
  void finish_beams(RequestState& r);

  models::LanguageModel& model_;
  kv::BlockPool pool_;
  sched::Scheduler scheduler_;
  const Tokenizer* tokenizer_ = nullptr;
  std::unique_ptr<DraftProposer> drafter_;
  bool adaptive_speculation_ = true;
  std::int64_t max_context_tokens_;
  bool prefix_caching_;
  bool draft_prefix_caching_ = false;  // also the draft's cache (its blocks hold as many tokens)
  std::uint64_t prefix_salt_;          // the first block's parent hash: this model's KV layout
  std::map<RequestId, std::unique_ptr<RequestState>> requests_;  // ordered by id = arrival
  RequestId next_id_ = 0;
  Stopwatch clock_;
  Counters counters_;
  double step_ms_ = 0;   // the last model step
  double draft_ms_ = 0;  // the last step's proposals
  // Per-step scratch, reused.
  std::vector<RequestState*> running_requests_;
  std::vector<ScheduledSequence> running_;               // every running sequence
  std::vector<ScheduledSequence> scheduled_;             // those with work to do this step
  std::vector<ScheduledSequence> waiting_;               // those with logits pending (beams)
  std::vector<sched::SchedulableSequence> schedulable_;  // scheduled_, as the scheduler sees them
  std::vector<models::SequenceChunk> batch_;
  std::vector<std::int64_t> batch_tokens_;  // [chunks] tokens each chunk computes
  std::vector<models::KvBlockCopy> copies_;
  models::StepOutput output_;
};

}  // namespace kiln::genai
