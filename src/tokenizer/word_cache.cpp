// Per-thread word caches, a few per thread (one per recently used model), least recently used
// evicted, so short-lived tokenizers in tests do not pile up caches.
#include "tokenizer/word_cache.hpp"

#include <atomic>
#include <memory>

namespace kiln::tok {

std::uint64_t next_model_id() {
  static std::atomic<std::uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

WordCache& WordCache::for_thread(std::uint64_t model_id) {
  constexpr std::size_t kCachesPerThread = 4;
  struct Slot {
    std::uint64_t model_id;
    std::unique_ptr<WordCache> cache;
  };
  thread_local std::vector<Slot> slots;  // most recently used last
  for (std::size_t i = slots.size(); i-- > 0;) {
    if (slots[i].model_id != model_id) continue;
    if (i + 1 != slots.size()) {
      Slot hit = std::move(slots[i]);
      slots.erase(slots.begin() + static_cast<std::ptrdiff_t>(i));
      slots.push_back(std::move(hit));
    }
    return *slots.back().cache;
  }
  if (slots.size() == kCachesPerThread) slots.erase(slots.begin());
  slots.push_back({model_id, std::make_unique<WordCache>()});
  return *slots.back().cache;
}

}  // namespace kiln::tok
