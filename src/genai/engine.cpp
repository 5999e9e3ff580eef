#include "genai/engine.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace kiln::genai {

Engine::Engine(models::LanguageModel& model, sched::SchedulerConfig scheduler_config)
    : model_(model),
      pool_(static_cast<std::int32_t>(model.kv_cache_layout().num_blocks)),
      scheduler_(scheduler_config),
      max_context_tokens_(std::min(model.config().max_position_embeddings, model.kv_cache_layout().num_tokens())) {}

RequestId Engine::add_request(std::vector<std::int32_t> prompt, const GenerationConfig& config, TokenCallback on_token) {
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
  const RequestId id = next_id_++;
  auto r = std::make_unique<RequestState>(RequestState{
      .tokens = std::move(prompt),
      .num_prompt = prompt_tokens,
      .max_new_tokens = config.new_token_limit(prompt_tokens, max_context_tokens_),
      .config = config,
      .sampler = Sampler(config),
      .blocks = kv::BlockTable(pool_, static_cast<std::int32_t>(model_.kv_cache_layout().block_size)),
      .on_token = std::move(on_token),
      .finish_reason = FinishReason::kNone,
      .timings = {.queued_ms = clock_.elapsed_ms()},
  });
  if (r->max_new_tokens == 0) finish(*r, FinishReason::kLength);
  requests_.emplace(id, std::move(r));
  return id;
}

bool Engine::has_unfinished_requests() const {
  return std::any_of(requests_.begin(), requests_.end(),
                     [](const auto& kv) { return kv.second->finish_reason == FinishReason::kNone; });
}

const RequestState& Engine::request(RequestId id) const {
  auto it = requests_.find(id);
  if (it == requests_.end()) fail(ErrorKind::kNotFound, "no request with id {}", id);
  return *it->second;
}

void Engine::release(RequestId id) { requests_.erase(id); }

void Engine::abort(RequestId id) {
  auto it = requests_.find(id);
  if (it != requests_.end() && it->second->finish_reason == FinishReason::kNone) {
    finish(*it->second, FinishReason::kCancelled);
  }
}

void Engine::finish(RequestState& r, FinishReason reason) {
  r.finish_reason = reason;
  r.timings.finished_ms = clock_.elapsed_ms();
  r.blocks.clear();
}

void Engine::run_until_idle() {
  while (has_unfinished_requests()) step();
}

void Engine::step() {
  running_.clear();
  schedulable_.clear();
  for (auto& [id, r] : requests_) {
    if (r->finish_reason != FinishReason::kNone) continue;
    running_.push_back(r.get());
    schedulable_.push_back({static_cast<std::int64_t>(r->tokens.size()), r->num_computed, &r->blocks});
  }
  if (running_.empty()) return;

  const sched::ScheduleOutput plan = scheduler_.schedule(schedulable_);
  for (std::size_t i : plan.preempted) running_[i]->num_computed = 0;
  if (plan.chunks.empty()) {
    fail(ErrorKind::kInternal, "the scheduler could not place any of {} requests in a KV cache of {} blocks",
         running_.size(), pool_.num_blocks());
  }

  batch_.clear();
  for (const sched::ScheduledChunk& c : plan.chunks) {
    RequestState& r = *running_[c.sequence];
    const bool completes = r.num_computed + c.num_tokens == static_cast<std::int64_t>(r.tokens.size());
    batch_.push_back({std::span(r.tokens).subspan(static_cast<std::size_t>(r.num_computed),
                                                  static_cast<std::size_t>(c.num_tokens)),
                      r.num_computed, r.blocks.blocks(),
                      completes ? models::LogitsMode::kLast : models::LogitsMode::kNone});
  }
  model_.step(batch_, output_);

  std::int64_t row = 0;
  for (std::size_t b = 0; b < plan.chunks.size(); ++b) {
    RequestState& r = *running_[plan.chunks[b].sequence];
    r.num_computed += plan.chunks[b].num_tokens;
    if (batch_[b].logits == models::LogitsMode::kLast) {
      std::span<float> logits(output_.logits.data() + row * output_.vocab_size, static_cast<std::size_t>(output_.vocab_size));
      ++row;
      sample_and_update(r, logits);
    }
  }
}

void Engine::sample_and_update(RequestState& r, std::span<float> logits) {
  const std::int32_t token = r.sampler.sample(logits, {r.tokens, r.num_prompt});
  if (r.timings.first_token_ms == 0) r.timings.first_token_ms = clock_.elapsed_ms();
  const bool is_eos = !r.config.ignore_eos && r.config.eos_token_ids.contains(token);
  const bool is_stop_token = r.config.stop_token_ids.contains(token);
  r.tokens.push_back(token);
  // The stopping token is recorded but not streamed: it is not part of the text.
  StreamingStatus status = StreamingStatus::RUNNING;
  if (!is_eos && !is_stop_token && r.on_token) status = r.on_token(token);
  if (is_eos || is_stop_token || status == StreamingStatus::STOP) {
    finish(r, FinishReason::kStop);
  } else if (status == StreamingStatus::CANCEL) {
    finish(r, FinishReason::kCancelled);
  } else if (r.num_generated() >= r.max_new_tokens) {
    finish(r, FinishReason::kLength);
  }
}

}  // namespace kiln::genai
