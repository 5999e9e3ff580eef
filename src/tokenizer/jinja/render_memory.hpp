// The memory one render's values hold at once, weighed against RenderLimits::max_memory_bytes.
// Interpreter::check_size and check_items stop one string or list from being too big; this
// stops a template from keeping many big ones alive (a list of copies of a 60 MB string, a
// namespace that grows each iteration), which the time limit alone would allow by gigabytes.
// Weighed: the bytes of every string a Value holds (copying a Value copies its string), the
// slots of every list, tuple and dict, undefined values' messages, and the scopes and variables
// of the render (kept to its end), while a render runs on this thread. Values made outside a
// render (the template's literals, the caller's context) weigh nothing until a render copies
// them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::jinja {

// The budget of the render running on this thread, installed for the object's lifetime.
class RenderMemory {
 public:
  explicit RenderMemory(size_t limit);
  ~RenderMemory();
  RenderMemory(const RenderMemory&) = delete;
  RenderMemory& operator=(const RenderMemory&) = delete;

  // Weighs `bytes` against the running render's budget (a LimitError past it) and returns the
  // ticket that gives them back; 0, weighing nothing, when no render runs on this thread.
  static uint32_t acquire(size_t bytes);
  // Gives back what `ticket` acquired, if its render still runs (once it ends there is nothing
  // left to give back to).
  static void release(uint32_t ticket, size_t bytes);

 private:
  RenderMemory* outer_;  // a render running when this one started, restored at the end
  size_t limit_;
  size_t held_ = 0;
  uint32_t ticket_;
};

}  // namespace kiln::jinja
