#include "genai/generation_channel.hpp"

namespace kiln::genai {

GenerationChannel::GenerationChannel(std::uint64_t request_id, std::weak_ptr<RequestControl> control)
    : request_id_(request_id), control_(std::move(control)) {}

void GenerationChannel::append(std::size_t index, std::span<const std::int32_t> ids,
                               std::span<const TokenLogprob> logprobs, std::string_view text) {
  std::shared_ptr<const std::function<void()>> callback;
  {
    std::lock_guard lock(mutex_);
    callback = on_change_;
    GenerationOutput& o = output(index);
    o.generated_ids.insert(o.generated_ids.end(), ids.begin(), ids.end());
    o.logprobs.insert(o.logprobs.end(), logprobs.begin(), logprobs.end());
    o.text.append(text);
    if (first_output_ms_ == 0 && !ids.empty()) first_output_ms_ = created_.elapsed_ms();
  }
  notify_changed(callback);
}

void GenerationChannel::finish_sequence(std::size_t index, GenerationFinishReason reason, float score) {
  std::lock_guard lock(mutex_);
  GenerationOutput& o = output(index);
  o.finish_reason = reason;
  o.score = score;
}

GenerationOutput& GenerationChannel::output(std::size_t index) {
  if (outputs_.size() <= index) {
    outputs_.resize(index + 1);
    read_.resize(index + 1);
  }
  return outputs_[index];
}

void GenerationChannel::replace(std::vector<GenerationOutput> outputs) {
  std::shared_ptr<const std::function<void()>> callback;
  {
    std::lock_guard lock(mutex_);
    callback = on_change_;
    outputs_ = std::move(outputs);
    read_.assign(outputs_.size(), Cursor{});
    if (first_output_ms_ == 0) first_output_ms_ = created_.elapsed_ms();
  }
  notify_changed(callback);
}

void GenerationChannel::note_first_token() {
  std::lock_guard lock(mutex_);
  if (first_output_ms_ == 0) first_output_ms_ = created_.elapsed_ms();
}

void GenerationChannel::end(GenerationStatus status, std::string error, PerfMetrics metrics) {
  std::shared_ptr<const std::function<void()>> callback;
  {
    std::lock_guard lock(mutex_);
    if (status_ != GenerationStatus::RUNNING) return;
    callback = on_change_;
    status_ = status;
    error_ = std::move(error);
    const double duration_ms = created_.elapsed_ms();
    RawPerfMetrics& raw = metrics.raw;
    raw.generate_durations_ms.push_back(duration_ms);
    if (first_output_ms_ > 0) raw.ttfts_ms.push_back(first_output_ms_);
    double generated = 0;
    for (double n : raw.num_generated_tokens) generated += n;
    raw.throughputs.push_back(duration_ms > 0 ? generated * 1000.0 / duration_ms : 0.0);
    metrics_ = std::move(metrics);
  }
  notify_changed(callback);
}

void GenerationChannel::notify_changed(const std::shared_ptr<const std::function<void()>>& callback) {
  changed_.notify_all();
  if (callback) (*callback)();
}

void GenerationChannel::set_on_change(std::function<void()> callback) {
  auto shared = callback ? std::make_shared<const std::function<void()>>(std::move(callback)) : nullptr;
  bool now = false;
  {
    std::lock_guard lock(mutex_);
    on_change_ = shared;
    now = has_unread() || status_ != GenerationStatus::RUNNING;
  }
  if (now && shared) (*shared)();
}

GenerationStatus GenerationChannel::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

std::string GenerationChannel::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

PerfMetrics GenerationChannel::perf_metrics() const {
  std::lock_guard lock(mutex_);
  return metrics_;
}

bool GenerationChannel::has_unread() const {
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    if (read_[i].ids < outputs_[i].generated_ids.size() || read_[i].text_bytes < outputs_[i].text.size()) return true;
  }
  return false;
}

bool GenerationChannel::can_read() const {
  std::lock_guard lock(mutex_);
  return has_unread();
}

GenerationOutputs GenerationChannel::read(std::optional<std::chrono::milliseconds> timeout) {
  std::unique_lock lock(mutex_);
  const auto ready = [&] { return has_unread() || status_ != GenerationStatus::RUNNING; };
  if (timeout) {
    changed_.wait_for(lock, *timeout, ready);
  } else {
    changed_.wait(lock, ready);
  }
  GenerationOutputs out;
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const GenerationOutput& o = outputs_[i];
    Cursor& c = read_[i];
    const bool ended = o.finish_reason != GenerationFinishReason::NONE;
    if (c.ids == o.generated_ids.size() && c.text_bytes == o.text.size() && (!ended || c.end_reported)) continue;
    GenerationOutput& d = out[i];
    const auto first = static_cast<std::ptrdiff_t>(c.ids);
    d.generated_ids.assign(o.generated_ids.begin() + first, o.generated_ids.end());
    if (c.ids < o.logprobs.size()) d.logprobs.assign(o.logprobs.begin() + first, o.logprobs.end());
    d.text = o.text.substr(c.text_bytes);
    d.score = o.score;
    d.finish_reason = o.finish_reason;
    c = {o.generated_ids.size(), o.text.size(), ended};
  }
  return out;
}

std::vector<GenerationOutput> GenerationChannel::read_all() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return status_ != GenerationStatus::RUNNING; });
  for (std::size_t i = 0; i < outputs_.size(); ++i)
    read_[i] = {outputs_[i].generated_ids.size(), outputs_[i].text.size(), true};
  return outputs_;
}

void GenerationChannel::request_end(GenerationStatus status) {
  if (const std::shared_ptr<RequestControl> control = control_.lock()) control->end_request(request_id_, status);
}

}  // namespace kiln::genai
