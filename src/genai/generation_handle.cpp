#include "kiln/generation_handle.hpp"

#include "genai/generation_channel.hpp"

namespace kiln {

const char* to_string(GenerationStatus status) {
  switch (status) {
    case GenerationStatus::RUNNING: return "running";
    case GenerationStatus::FINISHED: return "finished";
    case GenerationStatus::STOP: return "stopped";
    case GenerationStatus::CANCEL: return "cancelled";
    case GenerationStatus::FAILED: return "failed";
  }
  return "unknown";
}

GenerationHandleImpl::GenerationHandleImpl(std::shared_ptr<genai::GenerationChannel> channel)
    : channel_(std::move(channel)) {}

// As in OpenVINO GenAI, letting go of the handle drops the request: nobody can read it any more
// (a disconnected client), so its steps and KV blocks go to the others.
GenerationHandleImpl::~GenerationHandleImpl() {
  if (channel_->status() == GenerationStatus::RUNNING) channel_->request_end(GenerationStatus::CANCEL);
}

std::uint64_t GenerationHandleImpl::request_id() const { return channel_->request_id(); }
GenerationStatus GenerationHandleImpl::get_status() const { return channel_->status(); }
std::string GenerationHandleImpl::error() const { return channel_->error(); }
PerfMetrics GenerationHandleImpl::get_perf_metrics() const { return channel_->perf_metrics(); }
bool GenerationHandleImpl::can_read() const { return channel_->can_read(); }
GenerationOutputs GenerationHandleImpl::read() { return channel_->read(std::nullopt); }
GenerationOutputs GenerationHandleImpl::read_for(std::chrono::milliseconds timeout) { return channel_->read(timeout); }
std::vector<GenerationOutput> GenerationHandleImpl::read_all() { return channel_->read_all(); }
void GenerationHandleImpl::stop() { channel_->request_end(GenerationStatus::STOP); }
void GenerationHandleImpl::cancel() { channel_->request_end(GenerationStatus::CANCEL); }
void GenerationHandleImpl::set_on_output(std::function<void()> callback) {
  channel_->set_on_change(std::move(callback));
}

}  // namespace kiln
