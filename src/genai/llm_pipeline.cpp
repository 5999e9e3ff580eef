// LLMPipeline: the public facade over load_model + Engine + ChatSession. It turns text into
// requests (chat template, tokenizer), streamers into engine callbacks, and the engine's
// finished sequences into DecodedResults with their PerfMetrics.
#include "kiln/llm_pipeline.hpp"

#include <variant>

#include "genai/chat_session.hpp"
#include "genai/engine.hpp"
#include "genai/pipeline_models.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace kiln {
namespace {

// Engine callbacks for the streamer the caller passed.
genai::RequestOptions stream_options(const StreamerVariant& streamer) {
  genai::RequestOptions o;
  if (const auto* text = std::get_if<TextStreamerCallback>(&streamer); text && *text) {
    o.on_text = [cb = *text](std::string_view piece) { return cb(std::string(piece)); };
  } else if (const auto* stop = std::get_if<BoolStreamerCallback>(&streamer); stop && *stop) {
    o.on_text = [cb = *stop](std::string_view piece) {
      return cb(std::string(piece)) ? StreamingStatus::STOP : StreamingStatus::RUNNING;
    };
  } else if (const auto* tokens = std::get_if<std::shared_ptr<StreamerBase>>(&streamer); tokens && *tokens) {
    o.on_token = [s = *tokens](std::int32_t token) { return s->write(token); };
  }
  return o;
}

bool has_streamer(const StreamerVariant& streamer) { return !std::holds_alternative<std::monostate>(streamer); }

}  // namespace

class LLMPipeline::Impl {
 public:
  Impl(const std::filesystem::path& model_dir, const std::string& device, const PipelineProperties& properties)
      : models_(model_dir, device, properties),
        engine_(std::make_unique<genai::Engine>(*models_.main.model, models_.engine_options(properties))),
        config_(models_.main.generation_defaults) {
    metrics_.load_time_ms = load_clock_.elapsed_ms();
  }

  DecodedResults generate(const std::vector<std::string>& prompts, const std::optional<GenerationConfig>& config,
                          const StreamerVariant& streamer) {
    if (prompts.empty()) fail("generate: no prompts given");
    if (prompts.size() > 1 && has_streamer(streamer))
      fail("generate: a streamer needs a single prompt, got {}", prompts.size());
    if (chat_ && prompts.size() > 1) fail("generate: a chat turn is one prompt, got {}", prompts.size());
    Stopwatch clock;
    const GenerationConfig c = resolve(config);
    std::vector<std::vector<std::int32_t>> ids;
    for (const std::string& prompt : prompts)
      ids.push_back(chat_ ? chat_->render_turn(prompt) : models_.encode_prompt(prompt, c));
    const double tokenize_ms = clock.elapsed_ms();
    DecodedResults results = run(std::move(ids), c, streamer, tokenize_ms, clock, /*chat_turn=*/chat_.has_value());
    if (chat_) {
      if (results.finish_reasons.front() != GenerationFinishReason::CANCEL)
        chat_->commit_turn(prompts.front(), results.texts.front());
    }
    metrics_ += results.perf_metrics;
    return results;
  }

  DecodedResults generate(const ChatHistory& history, const std::optional<GenerationConfig>& config,
                          const StreamerVariant& streamer) {
    if (history.empty()) fail("generate: the chat history is empty");
    Stopwatch clock;
    const GenerationConfig c = resolve(config);
    std::vector<std::int32_t> ids = genai::encode_chat(models_.main.tokenizer, models_.get_chat_template(), history);
    const double tokenize_ms = clock.elapsed_ms();
    DecodedResults results = run({std::move(ids)}, c, streamer, tokenize_ms, clock, /*chat_turn=*/false);
    metrics_ += results.perf_metrics;
    return results;
  }

  Stopwatch load_clock_;  // first member: starts before the models load
  genai::PipelineModels models_;
  std::unique_ptr<genai::Engine> engine_;  // after the models: destroyed before them
  GenerationConfig config_;
  std::optional<genai::ChatSession> chat_;  // after the engine: its cache returns to the engine's pool
  PerfMetrics metrics_;

 private:
  GenerationConfig resolve(const std::optional<GenerationConfig>& given) const {
    return models_.resolve(given, config_);
  }

  // A chat turn starts from the session's cached KV and leaves its own there for the next turn;
  // any other call (a stateless ChatHistory too, even during a chat) computes its whole prompt.
  DecodedResults run(std::vector<std::vector<std::int32_t>> prompts, const GenerationConfig& c,
                     const StreamerVariant& streamer, double tokenize_ms, const Stopwatch& clock, bool chat_turn);
};

DecodedResults LLMPipeline::Impl::run(std::vector<std::vector<std::int32_t>> prompts, const GenerationConfig& c,
                                      const StreamerVariant& streamer, double tokenize_ms, const Stopwatch& clock,
                                      bool chat_turn) {
  const double engine_start_ms = engine_->clock().elapsed_ms();
  std::vector<genai::RequestId> ids;
  for (auto& prompt : prompts) {
    genai::RequestOptions options = stream_options(streamer);
    if (chat_turn) {
      if (std::optional<genai::CachedPrefix> cache = chat_->take_cache()) options.prefix.emplace(std::move(*cache));
      options.keep_kv = true;
    }
    ids.push_back(engine_->add_request(std::move(prompt), c, std::move(options)));
  }
  try {
    engine_->run_until_idle();
  } catch (...) {
    for (genai::RequestId id : ids) engine_->release(id);  // frees their KV blocks
    throw;
  }
  if (const auto* s = std::get_if<std::shared_ptr<StreamerBase>>(&streamer); s && *s) (*s)->end();

  DecodedResults out;
  RawPerfMetrics& raw = out.perf_metrics.raw;
  double detokenize_ms = 0, first_token_ms = 0;
  std::int64_t generated = 0, input = 0, prefilled = 0, draft_prefilled = 0, proposed = 0, accepted = 0;
  for (genai::RequestId id : ids) {
    const genai::RequestState& r = engine_->request(id);
    for (const auto& s : r.sequences) {
      const std::span<const std::int32_t> tokens = std::span(s->tokens).subspan(static_cast<std::size_t>(r.num_prompt));
      out.tokens.emplace_back(tokens.begin(), tokens.end());
      out.texts.push_back(s->text ? s->text->text() : models_.main.tokenizer.decode(tokens, true));
      out.scores.push_back(static_cast<float>(s->score));
      out.finish_reasons.push_back(s->finish_reason);
      if (c.logprobs > 0) out.logprobs.push_back(s->logprobs);
    }
    generated += r.num_generated_total();
    input += r.num_prompt;
    prefilled += r.num_prompt - r.num_reused;
    draft_prefilled += r.speculation.num_draft_prefilled;
    proposed += r.speculation.num_proposed;
    accepted += r.speculation.num_accepted;
    detokenize_ms += r.timings.detokenize_ms;
    if (first_token_ms == 0 && r.timings.first_token_ms > 0) first_token_ms = r.timings.first_token_ms;
    raw.token_latencies_ms.insert(raw.token_latencies_ms.end(), r.timings.token_latencies_ms.begin(),
                                  r.timings.token_latencies_ms.end());
  }
  if (chat_turn && engine_->request(ids.front()).sequences.size() == 1)
    chat_->keep_cache(engine_->take_kv(ids.front()));
  for (genai::RequestId id : ids) engine_->release(id);

  const double duration_ms = clock.elapsed_ms();
  raw.generate_durations_ms.push_back(duration_ms);
  raw.tokenization_durations_ms.push_back(tokenize_ms);
  raw.detokenization_durations_ms.push_back(detokenize_ms);
  if (first_token_ms > 0) raw.ttfts_ms.push_back(tokenize_ms + first_token_ms - engine_start_ms);
  raw.throughputs.push_back(duration_ms > 0 ? double(generated) * 1000.0 / duration_ms : 0.0);
  raw.num_input_tokens.push_back(double(input));
  raw.num_prefilled_tokens.push_back(double(prefilled));
  raw.num_generated_tokens.push_back(double(generated));
  if (proposed > 0) raw.acceptance_rates.push_back(double(accepted) / double(proposed));
  if (engine_->has_draft_model()) raw.num_draft_prefilled_tokens.push_back(double(draft_prefilled));
  raw.num_proposed_tokens = proposed;
  raw.num_accepted_tokens = accepted;
  out.perf_metrics.load_time_ms = metrics_.load_time_ms;
  return out;
}

LLMPipeline::LLMPipeline(const std::filesystem::path& model_dir, const std::string& device,
                         const PipelineProperties& properties)
    : impl_(std::make_unique<Impl>(model_dir, device, properties)) {}
LLMPipeline::~LLMPipeline() = default;
LLMPipeline::LLMPipeline(LLMPipeline&&) noexcept = default;
LLMPipeline& LLMPipeline::operator=(LLMPipeline&&) noexcept = default;

DecodedResults LLMPipeline::generate(const std::string& prompt, const std::optional<GenerationConfig>& config,
                                     const StreamerVariant& streamer) {
  return impl_->generate(std::vector<std::string>{prompt}, config, streamer);
}

DecodedResults LLMPipeline::generate(const std::vector<std::string>& prompts,
                                     const std::optional<GenerationConfig>& config, const StreamerVariant& streamer) {
  return impl_->generate(prompts, config, streamer);
}

DecodedResults LLMPipeline::generate(const ChatHistory& history, const std::optional<GenerationConfig>& config,
                                     const StreamerVariant& streamer) {
  return impl_->generate(history, config, streamer);
}

GenerationConfig LLMPipeline::get_generation_config() const { return impl_->config_; }

void LLMPipeline::set_generation_config(const GenerationConfig& config) {
  config.validate();
  impl_->config_ = config;
}

const Tokenizer& LLMPipeline::get_tokenizer() const { return impl_->models_.main.tokenizer; }

void LLMPipeline::start_chat(const std::string& system_message) {
  impl_->chat_.emplace(impl_->models_.main.tokenizer, system_message);
}

void LLMPipeline::finish_chat() { impl_->chat_.reset(); }

bool LLMPipeline::in_chat() const { return impl_->chat_.has_value(); }

const ChatHistory& LLMPipeline::get_chat_history() const {
  static const ChatHistory empty;
  return impl_->chat_ ? impl_->chat_->history() : empty;
}

const PerfMetrics& LLMPipeline::get_perf_metrics() const { return impl_->metrics_; }

void LLMPipeline::reset_perf_metrics() {
  const double load_ms = impl_->metrics_.load_time_ms;
  impl_->metrics_ = PerfMetrics{};
  impl_->metrics_.load_time_ms = load_ms;
}

}  // namespace kiln
