// One budget per thread at a time: renders do not share values across threads.
#include "tokenizer/jinja/render_memory.hpp"

#include "tokenizer/jinja/error.hpp"

namespace kiln::jinja {
namespace {

thread_local RenderMemory* t_running = nullptr;
thread_local uint32_t t_last_ticket = 0;

}  // namespace

RenderMemory::RenderMemory(size_t limit) : outer_(t_running), limit_(limit), ticket_(++t_last_ticket) {
  if (ticket_ == 0) ticket_ = ++t_last_ticket;  // 0 means "not weighed"; skip it when the count wraps
  t_running = this;
}

RenderMemory::~RenderMemory() { t_running = outer_; }

uint32_t RenderMemory::acquire(size_t bytes) {
  RenderMemory* memory = t_running;
  if (memory == nullptr) return 0;
  if (bytes > memory->limit_ - memory->held_) {
    raise(ErrorType::kLimitError, "the template's values would hold more than kiln's limit of {} bytes at once",
          memory->limit_);
  }
  memory->held_ += bytes;
  return memory->ticket_;
}

void RenderMemory::release(uint32_t ticket, size_t bytes) {
  RenderMemory* memory = t_running;
  if (ticket != 0 && memory != nullptr && memory->ticket_ == ticket) memory->held_ -= bytes;
}

}  // namespace kiln::jinja
