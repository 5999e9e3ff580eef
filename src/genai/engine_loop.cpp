#include "genai/engine_loop.hpp"

#include <algorithm>
#include <exception>
#include <iterator>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace kiln::genai {
namespace {

GenerationStatus status_of(GenerationFinishReason reason, GenerationStatus ended_by) {
  if (ended_by != GenerationStatus::RUNNING) return ended_by;
  return reason == GenerationFinishReason::CANCEL ? GenerationStatus::CANCEL : GenerationStatus::FINISHED;
}

GenerationFinishReason reason_of(GenerationStatus status) {
  return status == GenerationStatus::STOP ? GenerationFinishReason::STOP : GenerationFinishReason::CANCEL;
}

// What the engine counted for a finished request (the channel adds the times it saw).
PerfMetrics counted_metrics(const RequestState& r, bool has_draft_model) {
  PerfMetrics m;
  RawPerfMetrics& raw = m.raw;
  raw.num_input_tokens.push_back(double(r.num_prompt));
  raw.num_prefilled_tokens.push_back(double(r.num_prompt - r.num_reused));
  raw.num_generated_tokens.push_back(double(r.num_generated_total()));
  raw.detokenization_durations_ms.push_back(r.timings.detokenize_ms);
  raw.token_latencies_ms = r.timings.token_latencies_ms;
  if (r.timings.scheduled_ms) raw.queue_times_ms.push_back(*r.timings.scheduled_ms - r.timings.queued_ms);
  const SpeculationStats& spec = r.speculation;
  if (spec.num_proposed > 0) raw.acceptance_rates.push_back(double(spec.num_accepted) / double(spec.num_proposed));
  if (has_draft_model) raw.num_draft_prefilled_tokens.push_back(double(spec.num_draft_prefilled));
  raw.num_proposed_tokens = spec.num_proposed;
  raw.num_accepted_tokens = spec.num_accepted;
  return m;
}

}  // namespace

EngineLoop::EngineLoop(models::LanguageModel& model, EngineOptions options) : engine_(model, std::move(options)) {
  metrics_.num_kv_blocks = engine_.num_kv_blocks();
  collect_kv_cache_events();  // "all blocks cleared": the cache starts empty
  thread_ = std::thread([this] { run(); });
}

EngineLoop::~EngineLoop() { shut_down(); }

void EngineLoop::shut_down() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  kv_events_ready_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

GenerationHandle EngineLoop::add_request(std::uint64_t request_id, std::vector<std::int32_t> prompt,
                                         const GenerationConfig& config) {
  engine_.validate_request(prompt, config, {});
  auto channel = std::make_shared<GenerationChannel>(request_id, weak_from_this());
  {
    std::lock_guard lock(mutex_);
    if (stopping_) fail("the pipeline is shutting down: request {} was not added", request_id);
    if (!live_ids_.insert(request_id).second) {
      fail("request id {} is already in flight: ids of unfinished requests must differ", request_id);
    }
    ++metrics_.requests;
    ++metrics_.waiting;
    commands_.push_back(Add{request_id, std::move(prompt), config, channel});
  }
  wake_.notify_one();
  return std::make_shared<GenerationHandleImpl>(std::move(channel));
}

void EngineLoop::end_request(std::uint64_t request_id, GenerationStatus status) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !live_ids_.contains(request_id)) return;
    commands_.push_back(End{request_id, status});
  }
  wake_.notify_one();
}

void EngineLoop::wait_for_step() {
  std::unique_lock lock(mutex_);
  if (live_ids_.empty() || stopping_) return;
  const std::int64_t seen = steps_;
  stepped_.wait(lock, [&] { return steps_ > seen || live_ids_.empty() || stopping_; });
}

bool EngineLoop::has_non_finished_requests() const {
  std::lock_guard lock(mutex_);
  return !live_ids_.empty();
}

LoopMetrics EngineLoop::metrics() const {
  std::lock_guard lock(mutex_);
  return metrics_;
}

void EngineLoop::run() {
  std::deque<Command> commands;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !commands_.empty() || busy_; });
      if (stopping_) break;
      commands.swap(commands_);
    }
    apply_all(commands);
    double step_ms = 0;
    if (engine_.has_unfinished_requests()) {
      const Stopwatch clock;
      step_engine();
      step_ms = clock.elapsed_ms();
    }
    publish();
    update_metrics(step_ms);
    collect_kv_cache_events();
    // Ended only now, so whoever sees a request end also sees the metrics without it.
    for (Ended& e : ended_) e.channel->end(e.status, std::move(e.error), std::move(e.metrics));
    ended_.clear();
    stepped_.notify_all();
  }
  // Shutting down: whatever is left (queued or admitted) ends as CANCEL, and the engine lets go
  // of its KV blocks here, on its own thread, while the model still exists.
  std::lock_guard lock(mutex_);
  for (Command& c : commands_) {
    if (Add* add = std::get_if<Add>(&c)) add->channel->end(GenerationStatus::CANCEL, "the pipeline was shut down");
  }
  commands_.clear();
  for (auto& [id, t] : tracked_) {
    engine_.end_request(t.engine_id, GenerationFinishReason::CANCEL);
    engine_.release(t.engine_id);
    t.channel->end(GenerationStatus::CANCEL, "the pipeline was shut down");
  }
  tracked_.clear();
  live_ids_.clear();
  stepped_.notify_all();
}

void EngineLoop::apply_all(std::deque<Command>& commands) {
  // Requests that arrived during the same step are equals in first-come-first-served order:
  // those with the longest cached prefix go first (the cheapest to start, and their blocks are
  // taken before anything evicts them). Then the stops and cancels, which may name them.
  std::vector<std::pair<std::int64_t, Command*>> adds;
  for (Command& c : commands) {
    if (std::holds_alternative<Add>(c)) adds.emplace_back(0, &c);
  }
  if (adds.size() > 1) {  // a lone arrival has no one to go before
    for (auto& [cached, c] : adds) cached = engine_.cached_prefix_tokens(std::get<Add>(*c).prompt);
    std::stable_sort(adds.begin(), adds.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  }
  for (auto& [cached, c] : adds) apply(*c);
  for (Command& c : commands) {
    if (std::holds_alternative<End>(c)) apply(c);
  }
  commands.clear();
}

void EngineLoop::apply(Command& command) {
  if (Add* add = std::get_if<Add>(&command)) {
    try {
      const RequestId id = engine_.add_request(std::move(add->prompt), add->config, RequestOptions{});
      Tracked& t = tracked_[add->request_id];
      t.engine_id = id;
      t.channel = std::move(add->channel);
      std::lock_guard lock(mutex_);
      metrics_.prompt_tokens += engine_.request(id).num_prompt;
    } catch (const std::exception& e) {
      // Validated before it was queued, so this is rare (the KV cache cannot hold it at all).
      add->channel->end(GenerationStatus::FAILED, e.what());
      std::lock_guard lock(mutex_);
      live_ids_.erase(add->request_id);
    }
    return;
  }
  const End& end = std::get<End>(command);
  auto it = tracked_.find(end.request_id);
  if (it == tracked_.end()) return;  // ended already
  it->second.ended_by = end.status;
  engine_.end_request(it->second.engine_id, reason_of(end.status));
}

void EngineLoop::step_engine() {
  try {
    engine_.step();
  } catch (const std::exception& e) {
    // A failing step (the model, or the scheduler's own invariant) leaves no request's state
    // trustworthy: each one fails with the reason, and the loop goes on for new requests.
    spdlog::error("engine step failed: {}", e.what());
    fail_all(e.what());
  }
}

void EngineLoop::publish() {
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    Tracked& t = it->second;
    const RequestState& r = engine_.request(t.engine_id);
    const bool finished = r.finish_reason != GenerationFinishReason::NONE;
    if (r.beam_search) {
      // Beams are reordered and pruned every step: only the final hypotheses are output.
      if (r.timings.first_token_ms > 0) t.channel->note_first_token();
      if (finished) {
        std::vector<GenerationOutput> outputs;
        for (const auto& s : r.sequences) {
          const auto generated = std::span(s->tokens).subspan(static_cast<std::size_t>(r.num_prompt));
          outputs.push_back({.generated_ids = {generated.begin(), generated.end()},
                             .logprobs = s->logprobs,
                             .text = s->text ? s->text->text() : std::string(),  // no tokenizer: ids only
                             .score = static_cast<float>(s->score),
                             .finish_reason = s->finish_reason});
        }
        t.channel->replace(std::move(outputs));
      }
    } else {
      t.sent_ids.resize(r.sequences.size(), 0);
      t.sent_text.resize(r.sequences.size(), 0);
      for (std::size_t i = 0; i < r.sequences.size(); ++i) {
        const Sequence& s = *r.sequences[i];
        const auto first = static_cast<std::size_t>(r.num_prompt) + t.sent_ids[i];
        const auto end = static_cast<std::size_t>(s.num_committed());
        const std::span<const std::int32_t> ids = std::span(s.tokens).subspan(first, end - first);
        std::span<const TokenLogprob> logprobs;
        if (t.sent_ids[i] < s.logprobs.size()) logprobs = std::span(s.logprobs).subspan(t.sent_ids[i]);
        std::string_view text;
        if (s.text) text = std::string_view(s.text->text()).substr(t.sent_text[i]);
        if (!ids.empty() || !text.empty()) t.channel->append(i, ids, logprobs, text);
        t.sent_ids[i] += ids.size();
        t.sent_text[i] += text.size();
        if (!s.running()) t.channel->finish_sequence(i, s.finish_reason, static_cast<float>(s.score));
      }
    }
    if (!finished) {
      ++it;
      continue;
    }
    {
      std::lock_guard lock(mutex_);
      metrics_.generated_tokens += r.num_generated_total();
      metrics_.computed_prompt_tokens += r.num_prompt - r.num_reused;
    }
    ended_.push_back({it->first,
                      std::move(t.channel),
                      status_of(r.finish_reason, t.ended_by),
                      {},
                      counted_metrics(r, engine_.has_draft_model())});
    engine_.release(t.engine_id);
    it = tracked_.erase(it);
  }
}

void EngineLoop::fail_all(const std::string& why) {
  for (auto& [id, t] : tracked_) {
    engine_.end_request(t.engine_id, GenerationFinishReason::CANCEL);
    engine_.release(t.engine_id);
    ended_.push_back({id, std::move(t.channel), GenerationStatus::FAILED, why, {}});
  }
  tracked_.clear();
}

void EngineLoop::collect_kv_cache_events() {
  constexpr std::size_t kMaxBatches = 100'000;
  std::vector<KvCacheEvent> events = engine_.take_kv_cache_events();
  if (events.empty()) return;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  {
    std::lock_guard lock(mutex_);
    if (kv_events_.size() == kMaxBatches) {
      kv_events_.pop_front();
      if (!kv_events_overflowed_) spdlog::warn("KV cache events: nobody reads them; the oldest are dropped");
      kv_events_overflowed_ = true;
    }
    kv_events_.push_back({now, std::move(events)});
  }
  kv_events_ready_.notify_all();
}

std::vector<KvCacheEventBatch> EngineLoop::wait_kv_cache_events(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  kv_events_ready_.wait_for(lock, timeout, [&] { return stopping_ || !kv_events_.empty(); });
  std::vector<KvCacheEventBatch> batches(std::make_move_iterator(kv_events_.begin()),
                                         std::make_move_iterator(kv_events_.end()));
  kv_events_.clear();
  kv_events_overflowed_ = false;
  return batches;
}

void EngineLoop::update_metrics(double step_ms) {
  const Engine::Occupancy o = engine_.occupancy();
  const std::int64_t used = engine_.num_kv_blocks() - engine_.num_free_kv_blocks();
  std::lock_guard lock(mutex_);
  // The step's ended requests leave the live set with the same lock that publishes the metrics
  // without them, so no caller sees one without the other.
  for (const Ended& e : ended_) live_ids_.erase(e.request_id);
  std::int64_t queued = 0;
  for (const Command& c : commands_) queued += std::holds_alternative<Add>(c) ? 1 : 0;
  metrics_.requests = static_cast<std::int64_t>(live_ids_.size());
  metrics_.running = o.running;
  metrics_.waiting = o.waiting + queued;
  metrics_.used_kv_blocks = used;
  metrics_.max_used_kv_blocks = std::max(metrics_.max_used_kv_blocks, used);
  // A step that ran the model (not one that failed) is a sample of KV use.
  if (engine_.counters().steps > metrics_.steps) {
    metrics_.sum_kv_usage += double(used) / double(metrics_.num_kv_blocks);
    metrics_.step_ms += step_ms;
  }
  metrics_.steps = engine_.counters().steps;
  metrics_.preemptions = engine_.counters().preemptions;
  metrics_.prefix_cache_queries = engine_.counters().prefix_cache_queries;
  metrics_.prefix_cache_hits = engine_.counters().prefix_cache_hits;
  busy_ = !tracked_.empty();
  ++steps_;
}

}  // namespace kiln::genai
