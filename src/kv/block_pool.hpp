// The pool of KV cache blocks: a free list and a reference count per block, so sequences can
// share blocks (a forked beam, a cached prompt prefix) and a block is free again when its last
// user lets go. Prefix caching: a full block can be marked with its content (BlockHash chain);
// when its last user lets go it stays findable in an LRU of idle cached blocks, and is recycled
// (its content forgotten) only when the free list is empty, oldest first. Bookkeeping only: the
// K/V storage lives in the backend. With events recorded, what enters and leaves the cache is
// kept as KV cache events (kiln/kv_cache_events.hpp) until the owner takes them.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/kv_cache_events.hpp"

namespace kiln::kv {

class BlockPool {
 public:
  explicit BlockPool(std::int32_t num_blocks);

  std::int32_t num_blocks() const { return static_cast<std::int32_t>(ref_counts_.size()); }
  // Blocks allocate() can hand out: free ones and idle cached ones.
  std::int32_t num_free() const { return static_cast<std::int32_t>(free_.size() + idle_.size()); }
  std::int32_t num_idle_cached() const { return static_cast<std::int32_t>(idle_.size()); }

  // A block with reference count 1 (a free one, else the least recently used idle cached one,
  // whose content is forgotten), or nullopt when every block is in use.
  std::optional<std::int32_t> allocate();
  // One more user of an allocated block.
  void add_ref(std::int32_t block);
  // One user fewer; at zero the block is free again (a cached one: idle, still findable).
  void release(std::int32_t block);
  std::int32_t ref_count(std::int32_t block) const { return ref_counts_[static_cast<std::size_t>(block)]; }
  // The block's content is in the prefix cache: writing it would change what its hash promises.
  bool is_cached(std::int32_t block) const { return cached_[static_cast<std::size_t>(block)].valid; }

  // Marks an allocated, full block as holding the keys and values of `tokens` after the prefix
  // whose last block hashed to `parent`. Does nothing when a block with this hash is cached
  // already (two sequences computed the same prefix at once: one copy is kept).
  void cache(std::int32_t block, std::uint64_t hash, std::uint64_t parent, std::span<const std::int32_t> tokens);
  // The cached block with this content, with one more reference (an idle one leaves the LRU);
  // nullopt when there is none.
  std::optional<std::int32_t> find_cached(std::uint64_t hash, std::uint64_t parent,
                                          std::span<const std::int32_t> tokens);
  // Whether find_cached would find it (nothing changes).
  bool holds(std::uint64_t hash, std::uint64_t parent, std::span<const std::int32_t> tokens) const {
    return cached_block(hash, parent, tokens).has_value();
  }

  // From now on, records what cache() adds and recycling forgets, starting with "all blocks
  // cleared" (the pool must hold no cached block yet). A block whose parent is `root_parent` (the
  // hash chain's salt) is reported without a parent. Consecutive blocks of one chain become one
  // event, as do consecutive removals.
  void record_events(std::uint64_t root_parent);
  // The events recorded since the last call, oldest first.
  std::vector<KvCacheEvent> take_events() { return std::exchange(events_, {}); }

 private:
  struct CachedContent {
    bool valid = false;
    std::uint64_t hash = 0;
    std::uint64_t parent = 0;
    std::vector<std::int32_t> tokens;
    std::list<std::int32_t>::iterator idle_position;  // valid while the block is idle
  };
  void forget(std::int32_t block);
  void record_stored(std::uint64_t hash, std::uint64_t parent, std::span<const std::int32_t> tokens);
  void record_removed(std::uint64_t hash);
  std::optional<std::int32_t> cached_block(std::uint64_t hash, std::uint64_t parent,
                                           std::span<const std::int32_t> tokens) const;

  std::vector<std::int32_t> free_;        // LIFO: recently freed blocks are reused first (warm in cache)
  std::vector<std::int32_t> ref_counts_;  // [num_blocks]
  std::vector<CachedContent> cached_;     // [num_blocks]
  std::unordered_map<std::uint64_t, std::int32_t> by_hash_;
  std::list<std::int32_t> idle_;  // cached blocks no one uses, least recently used first
  bool recording_ = false;
  std::uint64_t root_parent_ = 0;
  std::vector<KvCacheEvent> events_;
};

}  // namespace kiln::kv
