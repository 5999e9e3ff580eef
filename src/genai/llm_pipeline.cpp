// LLMPipeline: one caller's view of a ContinuousBatchingPipeline (as OpenVINO GenAI's LLMPipeline
// runs on its continuous-batching backend). It keeps the caller's default GenerationConfig,
// turns each call's results into DecodedResults, and sums the call's requests into one
// PerfMetrics sample, as a single generate() call is measured.
#include "kiln/llm_pipeline.hpp"

#include <algorithm>

#include "kiln/continuous_batching_pipeline.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace kiln {
namespace {

// One caller rarely holds more than a couple of full contexts (a chat and a stateless call).
constexpr std::int64_t kDefaultKvCacheSequences = 2;

PipelineProperties with_defaults(PipelineProperties p) {
  if (p.kv_cache_sequences == 0) p.kv_cache_sequences = kDefaultKvCacheSequences;
  return p;
}

// One call's metrics from its requests': the call's own duration, the earliest first token,
// and the token counts and latencies of all of them.
double sum(const std::vector<double>& values) {
  double total = 0;
  for (double v : values) total += v;
  return total;
}

PerfMetrics call_metrics(const std::vector<GenerationResult>& results, double duration_ms) {
  PerfMetrics m;
  RawPerfMetrics& raw = m.raw;
  double input = 0, prefilled = 0, generated = 0, detokenize = 0, draft_prefilled = 0, first_token = 0;
  bool has_draft = false;
  for (const GenerationResult& r : results) {
    const RawPerfMetrics& each = r.perf_metrics.raw;
    input += sum(each.num_input_tokens);
    prefilled += sum(each.num_prefilled_tokens);
    generated += sum(each.num_generated_tokens);
    detokenize += sum(each.detokenization_durations_ms);
    draft_prefilled += sum(each.num_draft_prefilled_tokens);
    has_draft = has_draft || !each.num_draft_prefilled_tokens.empty();
    for (double ms : each.ttfts_ms) first_token = first_token == 0 ? ms : std::min(first_token, ms);
    raw.token_latencies_ms.insert(raw.token_latencies_ms.end(), each.token_latencies_ms.begin(),
                                  each.token_latencies_ms.end());
    raw.num_proposed_tokens += each.num_proposed_tokens;
    raw.num_accepted_tokens += each.num_accepted_tokens;
  }
  // Every request of the call carries the call's tokenization time.
  raw.tokenization_durations_ms = {results.front().perf_metrics.raw.tokenization_durations_ms.front()};
  raw.generate_durations_ms = {duration_ms};
  raw.detokenization_durations_ms = {detokenize};
  if (first_token > 0) raw.ttfts_ms = {first_token};
  raw.throughputs = {duration_ms > 0 ? generated * 1000.0 / duration_ms : 0.0};
  raw.num_input_tokens = {input};
  raw.num_prefilled_tokens = {prefilled};
  raw.num_generated_tokens = {generated};
  if (raw.num_proposed_tokens > 0) {
    raw.acceptance_rates = {double(raw.num_accepted_tokens) / double(raw.num_proposed_tokens)};
  }
  if (has_draft) raw.num_draft_prefilled_tokens = {draft_prefilled};
  return m;
}

DecodedResults decoded(std::vector<GenerationResult> results, double duration_ms, double load_time_ms) {
  DecodedResults out;
  for (GenerationResult& r : results) {
    if (r.status == GenerationStatus::FAILED) fail("generation failed: {}", r.error);
    std::move(r.texts.begin(), r.texts.end(), std::back_inserter(out.texts));
    std::move(r.tokens.begin(), r.tokens.end(), std::back_inserter(out.tokens));
    out.scores.insert(out.scores.end(), r.scores.begin(), r.scores.end());
    out.finish_reasons.insert(out.finish_reasons.end(), r.finish_reasons.begin(), r.finish_reasons.end());
    std::move(r.logprobs.begin(), r.logprobs.end(), std::back_inserter(out.logprobs));
  }
  out.perf_metrics = call_metrics(results, duration_ms);
  out.perf_metrics.load_time_ms = load_time_ms;
  return out;
}

}  // namespace

class LLMPipeline::Impl {
 public:
  Impl(const std::filesystem::path& model_dir, const std::string& device, const PipelineProperties& properties)
      : pipe_(model_dir, properties.scheduler, device, with_defaults(properties)), config_(pipe_.get_config()) {
    metrics_.load_time_ms = load_clock_.elapsed_ms();
  }

  template <typename Prompts>
  DecodedResults generate(const Prompts& prompts, const std::optional<GenerationConfig>& config,
                          const StreamerVariant& streamer) {
    const Stopwatch clock;
    std::vector<GenerationResult> results = pipe_.generate(prompts, {config.value_or(config_)}, streamer);
    DecodedResults out = decoded(std::move(results), clock.elapsed_ms(), metrics_.load_time_ms);
    if (chat_) chat_ = pipe_.get_chat_history();
    metrics_ += out.perf_metrics;
    return out;
  }

  Stopwatch load_clock_;  // first member: starts before the models load
  ContinuousBatchingPipeline pipe_;
  GenerationConfig config_;
  std::optional<ChatHistory> chat_;  // the pipeline's chat history, while in a chat
  PerfMetrics metrics_;
};

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

DecodedResults LLMPipeline::generate(const std::vector<std::vector<std::int32_t>>& input_ids,
                                     const std::optional<GenerationConfig>& config, const StreamerVariant& streamer) {
  return impl_->generate(input_ids, config, streamer);
}

DecodedResults LLMPipeline::generate(const ChatHistory& history, const std::optional<GenerationConfig>& config,
                                     const StreamerVariant& streamer) {
  return impl_->generate(std::vector<ChatHistory>{history}, config, streamer);
}

void LLMPipeline::cancel() { impl_->pipe_.cancel_generate(); }

GenerationConfig LLMPipeline::get_generation_config() const { return impl_->config_; }

void LLMPipeline::set_generation_config(const GenerationConfig& config) {
  config.validate();
  impl_->config_ = config;
}

const Tokenizer& LLMPipeline::get_tokenizer() const { return impl_->pipe_.get_tokenizer(); }

void LLMPipeline::start_chat(const std::string& system_message) {
  impl_->pipe_.start_chat(system_message);
  impl_->chat_ = impl_->pipe_.get_chat_history();
}

void LLMPipeline::finish_chat() {
  impl_->pipe_.finish_chat();
  impl_->chat_.reset();
}

bool LLMPipeline::in_chat() const { return impl_->chat_.has_value(); }

const ChatHistory& LLMPipeline::get_chat_history() const {
  static const ChatHistory empty;
  return impl_->chat_ ? *impl_->chat_ : empty;
}

const PerfMetrics& LLMPipeline::get_perf_metrics() const { return impl_->metrics_; }

void LLMPipeline::reset_perf_metrics() {
  const double load_ms = impl_->metrics_.load_time_ms;
  impl_->metrics_ = PerfMetrics{};
  impl_->metrics_.load_time_ms = load_ms;
}

}  // namespace kiln
