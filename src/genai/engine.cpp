#include "genai/engine.hpp"

#include <algorithm>

#include "genai/beam_search.hpp"
#include "genai/draft_proposer.hpp"
#include "genai/prompt_lookup.hpp"
#include "genai/speculation_controller.hpp"
#include "genai/structured_output.hpp"
#include "kv/block_hash.hpp"
#include "util/error.hpp"

namespace kiln::genai {
namespace {

// Candidates a speculative step proposes when the config does not say.
constexpr std::int64_t kDefaultCandidates = 5;

std::int64_t candidates_per_step(const GenerationConfig& c) {
  if (c.num_assistant_tokens > 0) return c.num_assistant_tokens;
  return c.assistant_confidence_threshold > 0 ? GenerationConfig::kMaxAssistantTokens : kDefaultCandidates;
}

// Keys and values differ between models and KV precisions for the same tokens: the salt keeps
// their cached blocks apart (a pool belongs to one model, but the hashes also leave the engine
// in KV events, where two replicas of one model must name a prefix alike).
std::uint64_t prefix_cache_salt(const models::LanguageModel& model) {
  const models::KvCacheLayout& kv = model.kv_cache_layout();
  const ir::ModelConfig& c = model.config();
  const std::int32_t fields[] = {static_cast<std::int32_t>(c.num_layers), static_cast<std::int32_t>(c.hidden_size),
                                 static_cast<std::int32_t>(c.vocab_size), static_cast<std::int32_t>(kv.num_kv_heads),
                                 static_cast<std::int32_t>(kv.head_dim),  static_cast<std::int32_t>(kv.block_size),
                                 static_cast<std::int32_t>(kv.precision), static_cast<std::int32_t>(kv.u8_group_size)};
  return kv::hash_block(0, fields);
}

}  // namespace

Engine::Engine(models::LanguageModel& model, sched::SchedulerConfig scheduler_config)
    : Engine(model, EngineOptions{.scheduler = scheduler_config}) {}

Engine::Engine(models::LanguageModel& model, EngineOptions options)
    : model_(model),
      pool_(static_cast<std::int32_t>(model.kv_cache_layout().num_blocks)),
      scheduler_(options.scheduler),
      tokenizer_(options.tokenizer),
      adaptive_speculation_(options.adaptive_speculation),
      max_context_tokens_(std::min(model.config().max_position_embeddings, model.kv_cache_layout().num_tokens())),
      prefix_caching_(options.scheduler.enable_prefix_caching),
      prefix_salt_(prefix_cache_salt(model)) {
  if (options.max_context_tokens > 0) max_context_tokens_ = std::min(max_context_tokens_, options.max_context_tokens);
  if (options.kv_cache_events) {
    if (!prefix_caching_) fail("KV cache events report the prefix cache: turn on enable_prefix_caching to have them");
    pool_.record_events(prefix_salt_);
  }
  if (options.draft_model != nullptr) {
    drafter_ = std::make_unique<DraftProposer>(*options.draft_model, model.config().vocab_size);
    draft_prefix_caching_ =
        prefix_caching_ && options.draft_model->kv_cache_layout().block_size == model.kv_cache_layout().block_size;
  }
}

Engine::~Engine() = default;

void Engine::validate_request(const std::vector<std::int32_t>& prompt, const GenerationConfig& config,
                              const RequestOptions& options) const {
  config.validate();
  if (prompt.empty()) fail("the prompt is empty: at least one token is needed to start generation");
  const auto prompt_tokens = static_cast<std::int64_t>(prompt.size());
  if (prompt_tokens >= max_context_tokens_) {
    fail("the prompt has {} tokens, but the context holds {} (model limit {}, KV cache {} tokens)", prompt_tokens,
         max_context_tokens_, model_.config().max_position_embeddings, model_.kv_cache_layout().num_tokens());
  }
  const std::int64_t vocab = model_.config().vocab_size;
  for (std::int32_t id : prompt) {
    if (id < 0 || id >= vocab) fail("prompt token id {} is outside the vocabulary [0, {})", id, vocab);
  }
  for (std::int32_t id : config.stop_token_ids) {
    if (id >= vocab) fail("GenerationConfig: stop_token_ids contains {}, outside the vocabulary [0, {})", id, vocab);
  }
  const bool wants_draft =
      !config.is_prompt_lookup() && (config.num_assistant_tokens > 0 || config.assistant_confidence_threshold > 0);
  if (wants_draft && !drafter_) {
    fail(
        "GenerationConfig: num_assistant_tokens / assistant_confidence_threshold need a draft model "
        "(LLMPipeline with draft_model(...), kiln run --draft DIR), or max_ngram_size for prompt lookup");
  }
  if (!config.stop_strings.empty() && tokenizer_ == nullptr) {
    fail(ErrorKind::kInternal, "GenerationConfig: stop_strings need the engine to have a tokenizer");
  }
  if (config.structured_output_config) {
    if (tokenizer_ == nullptr) {
      fail(ErrorKind::kInternal, "GenerationConfig: structured_output_config needs the engine to have a tokenizer");
    }
    make_grammar_matcher(config, *tokenizer_);  // compiles it here, on the caller's thread, and caches it
  }
  if (options.on_prompt_logits) {
    const auto n = static_cast<std::int64_t>(prompt.size());
    if (options.prompt_logits_from < 0 || options.prompt_logits_from >= n) {
      fail(ErrorKind::kInternal, "prompt logits from position {} of a {}-token prompt", options.prompt_logits_from, n);
    }
    if (config.is_beam_search() || config.num_return_sequences > 1 || options.on_token || config.is_prompt_lookup() ||
        config.num_assistant_tokens > 0) {
      fail(ErrorKind::kInternal, "a scoring request is one plain sequence without streaming or drafts");
    }
  }
  const bool several = config.num_beams > 1 || config.num_return_sequences > 1;
  if (several && options.on_token) {
    fail(
        "streaming needs a single sequence: num_beams is {} and num_return_sequences is {} (stream with 1 and 1, "
        "or read the results when generation ends)",
        config.num_beams, config.num_return_sequences);
  }
}

RequestId Engine::add_request(std::vector<std::int32_t> prompt, const GenerationConfig& config,
                              TokenCallback on_token) {
  RequestOptions options;
  options.on_token = std::move(on_token);
  return add_request(std::move(prompt), config, std::move(options));
}

RequestId Engine::add_request(std::vector<std::int32_t> prompt, const GenerationConfig& config,
                              RequestOptions options) {
  validate_request(prompt, config, options);
  auto r = std::make_unique<RequestState>(config);
  r->num_prompt = static_cast<std::int64_t>(prompt.size());
  r->max_new_tokens = r->scores_prompt() ? 0 : config.new_token_limit(r->num_prompt, max_context_tokens_);
  r->on_token = std::move(options.on_token);
  r->on_prompt_logits = std::move(options.on_prompt_logits);
  r->prompt_logits_from = options.prompt_logits_from;
  r->timings.queued_ms = clock_.elapsed_ms();
  r->speculative = config.is_prompt_lookup() ||
                   (drafter_ && (config.num_assistant_tokens > 0 || config.assistant_confidence_threshold > 0));
  if (r->speculative) {
    const double draft_cost = config.is_prompt_lookup() ? 0.0 : drafter_->cost_ratio(model_.config());
    r->controller =
        std::make_unique<SpeculationController>(candidates_per_step(config), adaptive_speculation_, draft_cost);
  }
  if (config.is_beam_search()) {
    std::function<bool(std::span<const std::int32_t>)> stop_check;
    if (!config.stop_strings.empty()) {
      stop_check = [tokenizer = tokenizer_, stops = config.stop_strings](std::span<const std::int32_t> generated) {
        const std::string text = tokenizer->decode(generated, true);
        return std::any_of(stops.begin(), stops.end(),
                           [&](const std::string& s) { return text.find(s) != std::string::npos; });
      };
    }
    r->beam_search = std::make_unique<BeamSearch>(config, r->num_prompt, r->max_new_tokens, std::move(stop_check));
  }
  start_sequence(*r, std::move(prompt));
  if (r->max_new_tokens == 0 && !r->scores_prompt()) {
    finish_sequence(*r, *r->sequences.front(), GenerationFinishReason::LENGTH);
    finish_request(*r);
  }
  const RequestId id = next_id_++;
  requests_.emplace(id, std::move(r));
  return id;
}

void Engine::start_sequence(RequestState& r, std::vector<std::int32_t> prompt) {
  const auto block_size = static_cast<std::int32_t>(model_.kv_cache_layout().block_size);
  auto s = std::make_unique<Sequence>(kv::BlockTable(pool_, block_size));
  s->tokens = std::move(prompt);
  if (!r.beam_search) s->text = make_text_stream(r.config);
  if (tokenizer_ != nullptr) s->grammar = make_grammar_matcher(r.config, *tokenizer_);
  r.sequences.push_back(std::move(s));
}

bool Engine::has_unfinished_requests() const {
  return std::any_of(requests_.begin(), requests_.end(),
                     [](const auto& kv) { return kv.second->finish_reason == GenerationFinishReason::NONE; });
}

const RequestState& Engine::request(RequestId id) const {
  auto it = requests_.find(id);
  if (it == requests_.end()) fail(ErrorKind::kNotFound, "no request with id {}", id);
  return *it->second;
}

void Engine::release(RequestId id) { requests_.erase(id); }

void Engine::end_request(RequestId id, GenerationFinishReason reason) {
  auto it = requests_.find(id);
  if (it == requests_.end() || it->second->finish_reason != GenerationFinishReason::NONE) return;
  RequestState& r = *it->second;
  for (auto& s : r.sequences) {
    if (s->running()) finish_sequence(r, *s, reason);
  }
  finish_request(r);
}

Engine::Occupancy Engine::occupancy() const {
  Occupancy o;
  for (const auto& [id, r] : requests_) {
    if (r->finish_reason != GenerationFinishReason::NONE) continue;
    const bool admitted =
        std::any_of(r->sequences.begin(), r->sequences.end(), [](const auto& s) { return s->admitted; });
    ++(admitted ? o.running : o.waiting);
  }
  return o;
}

void Engine::run_until_idle() {
  while (has_unfinished_requests()) step();
}

void Engine::collect_running() {
  running_requests_.clear();
  running_.clear();
  for (auto& [id, r] : requests_) {
    if (r->finish_reason != GenerationFinishReason::NONE) continue;
    running_requests_.push_back(r.get());
    for (auto& s : r->sequences) {
      if (!s->running()) continue;
      running_.push_back({r.get(), s.get()});
    }
  }
}

namespace {

// The prompt positions the draft computed while its cache grew from `before` to `after` tokens.
std::int64_t draft_prompt_tokens(const RequestState& r, std::int64_t before, std::int64_t after) {
  return std::max<std::int64_t>(0, std::min(after, r.num_prompt) - std::min(before, r.num_prompt));
}

}  // namespace

void Engine::propose_candidates() {
  std::vector<DraftProposer::Slot> slots;
  std::vector<RequestState*> slot_requests;
  std::vector<DraftProposer::CatchUp> catch_ups;
  std::vector<RequestState*> catch_up_requests;
  for (RequestState* r : running_requests_) {
    if (!r->speculative) continue;
    Sequence& s = *r->sequences.front();
    // Only a sequence in decode (every committed token but the last computed) speculates.
    const auto length = static_cast<std::int64_t>(s.tokens.size());
    if (s.num_computed != length - 1) continue;
    const bool lookup = r->config.is_prompt_lookup();
    const std::int64_t draft_behind = lookup ? 0 : length - (s.draft ? s.draft->num_computed : 0);
    const SpeculationController::Plan plan = r->controller->plan_step(draft_behind);
    const std::int64_t room = std::min(r->max_new_tokens - r->num_generated() - 1, max_context_tokens_ - length);
    const std::int64_t k = std::min(plan.candidates, room);
    if (k <= 0 && plan.catch_up <= 0) continue;
    if (!lookup && !s.draft) {
      s.draft = drafter_->make_state(r->config);
      if (draft_prefix_caching_) reuse_cached_draft_prefix(*r, s);
    }
    if (k <= 0) {
      catch_ups.push_back({&s, plan.catch_up});
      catch_up_requests.push_back(r);
    } else if (lookup) {
      const std::vector<std::int32_t> found = lookup_candidates(s.tokens, r->config.max_ngram_size, k);
      s.tokens.insert(s.tokens.end(), found.begin(), found.end());
      s.num_candidates = static_cast<std::int64_t>(found.size());
    } else {
      slots.push_back({&s, r, k});
      slot_requests.push_back(r);
    }
  }
  if (!catch_ups.empty()) {
    std::vector<std::int64_t> before;
    for (const auto& c : catch_ups) before.push_back(c.sequence->draft->num_computed);
    const double start = clock_.elapsed_ms();
    const std::int64_t computed = drafter_->catch_up(catch_ups);
    const double ms = clock_.elapsed_ms() - start;
    // Each request pays its share of the batched catch-up, by tokens.
    for (std::size_t i = 0; i < catch_ups.size() && computed > 0; ++i) {
      const std::int64_t after = catch_ups[i].sequence->draft->num_computed;
      const std::int64_t n = after - before[i];
      catch_up_requests[i]->controller->record_catch_up(n, ms * double(n) / double(computed));
      catch_up_requests[i]->speculation.num_draft_prefilled +=
          draft_prompt_tokens(*catch_up_requests[i], before[i], after);
    }
  }
  draft_ms_ = 0;
  if (slots.empty()) return;
  std::vector<std::int64_t> before;
  for (const auto& slot : slots) before.push_back(slot.sequence->draft->num_computed);
  const double start = clock_.elapsed_ms();
  drafter_->propose(slots);
  draft_ms_ = clock_.elapsed_ms() - start;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    RequestState& r = *slot_requests[i];
    r.speculation.num_draft_prefilled += draft_prompt_tokens(r, before[i], slots[i].sequence->draft->num_computed);
  }
}

namespace {

// Candidates that cannot be verified this step (the sequence was preempted, or the scheduler gave
// it fewer rows) are dropped; the draft forgets them too.
void drop_candidates(Sequence& s, std::int64_t keep) {
  if (keep >= s.num_candidates) return;
  const std::int64_t committed = s.num_committed();
  s.tokens.resize(static_cast<std::size_t>(committed + keep));
  if (!s.candidate_probs.empty()) {
    s.candidate_probs.resize(s.candidate_probs.size() / static_cast<std::size_t>(s.num_candidates) *
                             static_cast<std::size_t>(keep));
  }
  s.num_candidates = keep;
  if (s.draft) DraftProposer::rollback(*s.draft, committed + keep);
}

}  // namespace

void Engine::execute(const sched::ScheduleOutput& plan) {
  copies_.clear();
  for (const kv::BlockCopy& c : plan.copies) copies_.push_back({c.src, c.dst});
  if (!copies_.empty()) model_.copy_blocks(copies_);

  batch_.clear();
  batch_tokens_.clear();
  for (const sched::ScheduledChunk& c : plan.chunks) {
    const RequestState& r = *scheduled_[c.sequence].request;
    Sequence& s = *scheduled_[c.sequence].sequence;
    std::int64_t take = c.num_tokens;
    const std::int64_t committed = s.num_committed();
    models::LogitsMode mode = models::LogitsMode::kNone;
    if (s.num_candidates > 0 && s.num_computed == committed - 1) {
      drop_candidates(s, take - 1);  // row i verifies candidate i + 1
      mode = models::LogitsMode::kAll;
    } else {
      drop_candidates(s, 0);
      take = std::min(take, committed - s.num_computed);
      if (r.scores_prompt()) {
        if (s.num_computed < r.prompt_logits_from) {
          take = std::min(take, r.prompt_logits_from - s.num_computed);
        } else {
          mode = models::LogitsMode::kAll;
        }
      } else if (s.num_computed + take == committed) {
        mode = models::LogitsMode::kLast;
      }
    }
    batch_.push_back(
        {std::span(s.tokens).subspan(static_cast<std::size_t>(s.num_computed), static_cast<std::size_t>(take)),
         s.num_computed, s.blocks.blocks(), mode});
    batch_tokens_.push_back(take);
  }
  const double start = clock_.elapsed_ms();
  model_.step(batch_, output_);
  step_ms_ = clock_.elapsed_ms() - start;

  std::int64_t row = 0;
  for (std::size_t b = 0; b < plan.chunks.size(); ++b) {
    const RequestState& r = *scheduled_[plan.chunks[b].sequence].request;
    Sequence& s = *scheduled_[plan.chunks[b].sequence].sequence;
    const std::int64_t first_position = s.num_computed;
    s.num_computed += batch_tokens_[b];
    s.step_tokens = batch_tokens_[b];
    if (prefix_caching_) cache_computed_blocks(s);
    const std::int64_t rows = models::logits_rows(batch_[b]);
    if (rows == 0) continue;
    if (r.scores_prompt()) {
      // Handed over in place: a window's rows are too many to copy into the sequence.
      r.on_prompt_logits(first_position, std::span(output_.logits)
                                             .subspan(static_cast<std::size_t>(row * output_.vocab_size),
                                                      static_cast<std::size_t>(rows * output_.vocab_size)));
      row += rows;
      continue;
    }
    s.logits.assign(output_.logits.begin() + static_cast<std::ptrdiff_t>(row * output_.vocab_size),
                    output_.logits.begin() + static_cast<std::ptrdiff_t>((row + rows) * output_.vocab_size));
    s.logit_rows = rows;
    row += rows;
  }
}

void Engine::step() {
  collect_running();
  if (running_.empty()) return;
  propose_candidates();
  // Sequences with logits pending (beams waiting for the rest of their group) compute nothing.
  waiting_.clear();
  scheduled_.clear();
  for (const ScheduledSequence& q : running_) (q.sequence->logit_rows > 0 ? waiting_ : scheduled_).push_back(q);
  if (prefix_caching_) {
    for (const ScheduledSequence& q : scheduled_) reuse_cached_prefix(*q.request, *q.sequence);
  }
  sched::ScheduleOutput plan = schedule();
  if (plan.chunks.empty()) {
    // Waiting beams hold blocks that no one else can use while they wait: free them (their
    // logits stay; their continuations recompute) and try again.
    bool freed = false;
    for (const ScheduledSequence& q : waiting_) {
      if (q.sequence->blocks.blocks().empty()) continue;
      q.sequence->blocks.clear();
      q.sequence->num_computed = 0;
      q.sequence->admitted = false;
      freed = true;
    }
    if (freed) plan = schedule();
  }
  if (plan.chunks.empty()) {
    fail(ErrorKind::kInternal, "the scheduler could not place any of {} sequences in a KV cache of {} blocks",
         scheduled_.size(), pool_.num_blocks());
  }
  // A sequence left out of this step keeps no candidates (they are only valid within a step).
  std::vector<bool> in_step(scheduled_.size());
  for (const sched::ScheduledChunk& c : plan.chunks) in_step[c.sequence] = true;
  for (std::size_t i = 0; i < scheduled_.size(); ++i) {
    if (!in_step[i]) drop_candidates(*scheduled_[i].sequence, 0);
  }
  execute(plan);
  ++counters_.steps;
  for (RequestState* r : running_requests_) update_request(*r);
}

sched::ScheduleOutput Engine::schedule() {
  schedulable_.clear();
  for (const ScheduledSequence& q : scheduled_) {
    schedulable_.push_back({static_cast<std::int64_t>(q.sequence->tokens.size()), q.sequence->num_computed,
                            &q.sequence->blocks, !q.sequence->admitted});
  }
  sched::ScheduleOutput plan = scheduler_.schedule(schedulable_);
  for (std::size_t i : plan.preempted) {
    scheduled_[i].sequence->num_computed = 0;
    scheduled_[i].sequence->admitted = false;
  }
  for (const sched::ScheduledChunk& c : plan.chunks) {
    scheduled_[c.sequence].sequence->admitted = true;
    RequestTimings& timings = scheduled_[c.sequence].request->timings;
    if (!timings.scheduled_ms) timings.scheduled_ms = clock_.elapsed_ms();
  }
  counters_.preemptions += static_cast<std::int64_t>(plan.preempted.size());
  return plan;
}

}  // namespace kiln::genai
