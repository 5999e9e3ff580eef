// ContinuousBatchingPipeline: the public facade over PipelineModels + EngineLoop. It turns text
// into requests and handles into results; streamers run here, on the caller's thread, reading
// the request's channel, never on the engine thread.
#include "kiln/continuous_batching_pipeline.hpp"

#include <atomic>
#include <mutex>

#include "genai/chat_session.hpp"
#include "genai/engine_loop.hpp"
#include "genai/pipeline_models.hpp"
#include "runtime/thread_pool.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace kiln {
namespace {

// generate() numbers its own requests from here up, out of the way of callers' ids.
constexpr std::uint64_t kFirstGenerateId = std::uint64_t{1} << 63;

PipelineProperties with_scheduler(PipelineProperties p, const SchedulerConfig& scheduler) {
  p.scheduler = scheduler;
  if (p.kv_cache_sequences == 0) p.kv_cache_sequences = scheduler.max_num_seqs;  // all of them at full context
  return p;
}

// Feeds one request's output to the caller's streamer as it arrives. Returns what the streamer
// saw, for the result: a streamer that said STOP or CANCEL gets an answer that ends where it
// stopped reading, with its word as the status, although the engine may have gone one step
// further (or ended by itself) before it heard.
struct StreamedPart {
  std::size_t num_ids = 0;
  std::string text;  // text streamers: what they were given
  StreamingStatus ended_by = StreamingStatus::RUNNING;
  bool streams_text = false;
};

struct Fed {
  StreamingStatus status = StreamingStatus::RUNNING;
  std::size_t num_ids = 0;  // of the output's ids, those the streamer took (a token streamer may stop mid-way)
};

Fed feed(const StreamerVariant& streamer, const GenerationOutput& out) {
  const std::size_t all = out.generated_ids.size();
  if (const auto* text = std::get_if<TextStreamerCallback>(&streamer); text && *text) {
    return {out.text.empty() ? StreamingStatus::RUNNING : (*text)(out.text), all};
  }
  if (const auto* stop = std::get_if<BoolStreamerCallback>(&streamer); stop && *stop) {
    return {!out.text.empty() && (*stop)(out.text) ? StreamingStatus::STOP : StreamingStatus::RUNNING, all};
  }
  if (const auto* tokens = std::get_if<std::shared_ptr<StreamerBase>>(&streamer); tokens && *tokens) {
    for (std::size_t i = 0; i < all; ++i) {
      const StreamingStatus s = (*tokens)->write(out.generated_ids[i]);
      if (s != StreamingStatus::RUNNING) return {s, i + 1};
    }
  }
  return {StreamingStatus::RUNNING, all};
}

StreamedPart stream(GenerationHandleImpl& handle, const StreamerVariant& streamer) {
  StreamedPart seen;
  seen.streams_text = !std::holds_alternative<std::shared_ptr<StreamerBase>>(streamer);
  try {
    for (GenerationOutputs outs = handle.read(); !outs.empty(); outs = handle.read()) {
      const auto it = outs.find(0);
      if (it == outs.end() || seen.ended_by != StreamingStatus::RUNNING) continue;
      const Fed fed = feed(streamer, it->second);
      seen.num_ids += fed.num_ids;
      seen.text += it->second.text;
      if (fed.status == StreamingStatus::RUNNING) continue;
      seen.ended_by = fed.status;
      fed.status == StreamingStatus::STOP ? handle.stop() : handle.cancel();
    }
  } catch (...) {
    handle.cancel();
    handle.read_all();  // wait until the engine has let go of it
    throw;
  }
  if (const auto* tokens = std::get_if<std::shared_ptr<StreamerBase>>(&streamer); tokens && *tokens) (*tokens)->end();
  return seen;
}

// Tokenization happened before the request was added: it counts into the request's times.
void add_tokenization(PerfMetrics& m, double tokenize_ms) {
  RawPerfMetrics& raw = m.raw;
  raw.tokenization_durations_ms.push_back(tokenize_ms);
  for (double& ms : raw.ttfts_ms) ms += tokenize_ms;
  for (double& ms : raw.generate_durations_ms) ms += tokenize_ms;
}

GenerationResult to_result(GenerationHandleImpl& handle, const std::optional<StreamedPart>& streamed,
                           double tokenize_ms, const Tokenizer& tokenizer) {
  GenerationResult r;
  r.request_id = handle.request_id();
  for (GenerationOutput& o : handle.read_all()) {
    r.texts.push_back(std::move(o.text));
    r.tokens.push_back(std::move(o.generated_ids));
    r.scores.push_back(o.score);
    r.finish_reasons.push_back(o.finish_reason);
    if (!o.logprobs.empty()) r.logprobs.push_back(std::move(o.logprobs));
  }
  r.status = handle.get_status();
  r.error = handle.error();
  r.perf_metrics = handle.get_perf_metrics();
  add_tokenization(r.perf_metrics, tokenize_ms);
  if (streamed && streamed->ended_by != StreamingStatus::RUNNING && !r.tokens.empty() &&
      r.status != GenerationStatus::FAILED) {
    r.tokens.front().resize(std::min(r.tokens.front().size(), streamed->num_ids));
    if (!r.logprobs.empty()) r.logprobs.front().resize(std::min(r.logprobs.front().size(), streamed->num_ids));
    r.texts.front() = streamed->streams_text ? streamed->text : tokenizer.decode(r.tokens.front(), true);
    const bool cancel = streamed->ended_by == StreamingStatus::CANCEL;
    r.status = cancel ? GenerationStatus::CANCEL : GenerationStatus::STOP;
    r.finish_reasons.front() = cancel ? GenerationFinishReason::CANCEL : GenerationFinishReason::STOP;
  }
  return r;
}

bool has_streamer(const StreamerVariant& streamer) { return !std::holds_alternative<std::monostate>(streamer); }

// generate()'s configs: one for every prompt, or one each.
const GenerationConfig& config_for(const std::vector<GenerationConfig>& configs, std::size_t num_prompts,
                                   std::size_t i) {
  if (configs.size() != 1 && configs.size() != num_prompts) {
    fail("generate: {} configs for {} prompts (give one for all, or one each)", configs.size(), num_prompts);
  }
  return configs[configs.size() == 1 ? 0 : i];
}

}  // namespace

class ContinuousBatchingPipeline::Impl {
 public:
  Impl(const std::filesystem::path& dir, const std::string& device, const PipelineProperties& properties)
      : models_(dir, device, properties),
        loop_(std::make_shared<genai::EngineLoop>(*models_.main.model, models_.engine_options(properties))) {
    // The engine thread inherited the CPU the model's pool pinned this thread to; this thread
    // (and every thread it starts: clients, HTTP handlers) gets its own affinity back.
    caller_affinity_.restore();
  }
  ~Impl() { loop_->shut_down(); }  // before the models go: the engine thread steps them

  GenerationHandle add(std::uint64_t id, std::vector<std::int32_t> ids, const GenerationConfig& config) {
    return loop_->add_request(id, std::move(ids), models_.resolve(config, models_.main.generation_defaults));
  }

  std::vector<std::int32_t> encode(const std::string& prompt, const GenerationConfig& config) {
    std::lock_guard lock(text_mutex_);
    return models_.encode_prompt(prompt, config);
  }
  std::vector<std::int32_t> encode(const ChatHistory& history) {
    std::lock_guard lock(text_mutex_);
    return genai::encode_chat(models_.main.tokenizer, models_.get_chat_template(), history);
  }

  std::vector<GenerationResult> generate(std::vector<std::vector<std::int32_t>> prompts,
                                         const std::vector<GenerationConfig>& configs, const StreamerVariant& streamer,
                                         double tokenize_ms) {
    if (prompts.empty()) fail("generate: no prompts given");
    if (has_streamer(streamer)) {
      if (prompts.size() > 1) fail("generate: a streamer needs a single prompt, got {}", prompts.size());
      const GenerationConfig& c = config_for(configs, 1, 0);
      if (c.num_beams > 1 || c.num_return_sequences > 1) {
        fail(
            "streaming needs a single sequence: num_beams is {} and num_return_sequences is {} (stream with 1 "
            "and 1, or read the results when generation ends)",
            c.num_beams, c.num_return_sequences);
      }
    }
    // A refused prompt throws here; the handles of those added before it cancel them as they go.
    std::vector<GenerationHandle> handles;
    const InFlight in_flight(*this, handles);
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const GenerationConfig& config = config_for(configs, prompts.size(), i);
      GenerationHandle handle = add(next_generate_id_++, std::move(prompts[i]), config);
      std::lock_guard lock(generating_mutex_);
      handles.push_back(std::move(handle));
    }
    std::optional<StreamedPart> streamed;
    if (has_streamer(streamer)) streamed = stream(*handles.front(), streamer);
    std::vector<GenerationResult> results;
    for (const GenerationHandle& h : handles)
      results.push_back(to_result(*h, streamed, tokenize_ms, models_.main.tokenizer));
    return results;
  }

  void cancel_generate(std::optional<std::thread::id> caller) {
    std::lock_guard lock(generating_mutex_);
    for (const GenerateCall& call : generating_) {
      if (caller && call.thread != *caller) continue;
      for (const GenerationHandle& h : *call.handles) h->cancel();
    }
  }

  // A generate() call under way: its thread and its handles, for cancel_generate().
  struct GenerateCall {
    std::thread::id thread;
    const std::vector<GenerationHandle>* handles;
    bool operator==(const GenerateCall&) const = default;
  };
  class InFlight {
   public:
    InFlight(Impl& impl, const std::vector<GenerationHandle>& handles)
        : impl_(impl), call_{std::this_thread::get_id(), &handles} {
      std::lock_guard lock(impl_.generating_mutex_);
      impl_.generating_.push_back(call_);
    }
    ~InFlight() {
      std::lock_guard lock(impl_.generating_mutex_);
      std::erase(impl_.generating_, call_);
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    Impl& impl_;
    GenerateCall call_;
  };

  SavedThreadAffinity caller_affinity_;  // first: read before the models load
  genai::PipelineModels models_;
  std::shared_ptr<genai::EngineLoop> loop_;
  mutable std::mutex text_mutex_;  // the chat template and the chat session are shared by callers
  std::optional<genai::ChatSession> chat_;
  std::atomic<std::uint64_t> next_generate_id_{kFirstGenerateId};
  std::mutex generating_mutex_;  // guards generating_ and the handle lists it points to
  std::vector<GenerateCall> generating_;
};

ContinuousBatchingPipeline::ContinuousBatchingPipeline(const std::filesystem::path& models_path,
                                                       const SchedulerConfig& scheduler_config,
                                                       const std::string& device, PipelineProperties properties)
    : impl_(std::make_unique<Impl>(models_path, device, with_scheduler(std::move(properties), scheduler_config))) {}

ContinuousBatchingPipeline::~ContinuousBatchingPipeline() = default;

GenerationHandle ContinuousBatchingPipeline::add_request(std::uint64_t request_id, const std::string& prompt,
                                                         const GenerationConfig& config) {
  return impl_->add(request_id, impl_->encode(prompt, config), config);
}

GenerationHandle ContinuousBatchingPipeline::add_request(std::uint64_t request_id, std::vector<std::int32_t> input_ids,
                                                         const GenerationConfig& config) {
  return impl_->add(request_id, std::move(input_ids), config);
}

GenerationHandle ContinuousBatchingPipeline::add_request(std::uint64_t request_id, const ChatHistory& history,
                                                         const GenerationConfig& config) {
  if (history.empty()) fail("add_request: the chat history of request {} is empty", request_id);
  return impl_->add(request_id, impl_->encode(history), config);
}

void ContinuousBatchingPipeline::cancel_generate(std::optional<std::thread::id> caller) {
  impl_->cancel_generate(caller);
}

void ContinuousBatchingPipeline::step() { impl_->loop_->wait_for_step(); }

bool ContinuousBatchingPipeline::has_non_finished_requests() const { return impl_->loop_->has_non_finished_requests(); }

std::vector<GenerationResult> ContinuousBatchingPipeline::generate(const std::vector<std::string>& prompts,
                                                                   const std::vector<GenerationConfig>& configs,
                                                                   const StreamerVariant& streamer) {
  const Stopwatch tokenize;
  std::vector<std::vector<std::int32_t>> ids;
  std::optional<std::string> chat_turn;
  {
    std::lock_guard lock(impl_->text_mutex_);
    if (impl_->chat_ && prompts.size() != 1) fail("generate: a chat turn is one prompt, got {}", prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const GenerationConfig& c = config_for(configs, prompts.size(), i);
      ids.push_back(impl_->chat_ ? impl_->chat_->render_turn(prompts[i]) : impl_->models_.encode_prompt(prompts[i], c));
    }
    if (impl_->chat_) chat_turn = prompts.front();
  }
  std::vector<GenerationResult> results = impl_->generate(std::move(ids), configs, streamer, tokenize.elapsed_ms());
  if (chat_turn) {
    std::lock_guard lock(impl_->text_mutex_);
    const GenerationResult& r = results.front();
    if (impl_->chat_ && r.status != GenerationStatus::CANCEL && r.status != GenerationStatus::FAILED) {
      impl_->chat_->commit_turn(*chat_turn, r.texts.front());
    }
  }
  return results;
}

std::vector<GenerationResult> ContinuousBatchingPipeline::generate(
    const std::vector<std::vector<std::int32_t>>& input_ids, const std::vector<GenerationConfig>& configs,
    const StreamerVariant& streamer) {
  return impl_->generate(input_ids, configs, streamer, 0.0);
}

std::vector<GenerationResult> ContinuousBatchingPipeline::generate(const std::vector<ChatHistory>& histories,
                                                                   const std::vector<GenerationConfig>& configs,
                                                                   const StreamerVariant& streamer) {
  const Stopwatch tokenize;
  std::vector<std::vector<std::int32_t>> ids;
  for (const ChatHistory& history : histories) {
    if (history.empty()) fail("generate: chat history {} of {} is empty", ids.size() + 1, histories.size());
    ids.push_back(impl_->encode(history));
  }
  return impl_->generate(std::move(ids), configs, streamer, tokenize.elapsed_ms());
}

void ContinuousBatchingPipeline::start_chat(const std::string& system_message) {
  std::lock_guard lock(impl_->text_mutex_);
  impl_->chat_.emplace(impl_->models_.main.tokenizer, system_message);
}

void ContinuousBatchingPipeline::finish_chat() {
  std::lock_guard lock(impl_->text_mutex_);
  impl_->chat_.reset();
}

ChatHistory ContinuousBatchingPipeline::get_chat_history() const {
  std::lock_guard lock(impl_->text_mutex_);
  return impl_->chat_ ? impl_->chat_->history() : ChatHistory{};
}

const Tokenizer& ContinuousBatchingPipeline::get_tokenizer() const { return impl_->models_.main.tokenizer; }

GenerationConfig ContinuousBatchingPipeline::get_config() const { return impl_->models_.main.generation_defaults; }

std::int64_t ContinuousBatchingPipeline::get_max_context_tokens() const {
  return impl_->loop_->engine().max_context_tokens();
}

PipelineMetrics ContinuousBatchingPipeline::get_metrics() const {
  const genai::LoopMetrics m = impl_->loop_->metrics();
  const double blocks = m.num_kv_blocks > 0 ? double(m.num_kv_blocks) : 1.0;
  return {.requests = m.requests,
          .scheduled_requests = m.running,
          .waiting_requests = m.waiting,
          .cache_usage = 100.0 * double(m.used_kv_blocks) / blocks,
          .max_cache_usage = 100.0 * double(m.max_used_kv_blocks) / blocks,
          .avg_cache_usage = m.steps > 0 ? 100.0 * m.sum_kv_usage / double(m.steps) : 0.0,
          .num_kv_blocks = m.num_kv_blocks,
          .num_steps = m.steps,
          .num_preemptions = m.preemptions,
          .prefix_cache_queries = m.prefix_cache_queries,
          .prefix_cache_hits = m.prefix_cache_hits,
          .num_prompt_tokens = m.prompt_tokens,
          .num_computed_prompt_tokens = m.computed_prompt_tokens,
          .num_generated_tokens = m.generated_tokens,
          .inference_duration_ms = m.step_ms};
}

std::vector<KvCacheEventBatch> ContinuousBatchingPipeline::wait_kv_cache_events(std::chrono::milliseconds timeout) {
  return impl_->loop_->wait_kv_cache_events(timeout);
}

}  // namespace kiln
