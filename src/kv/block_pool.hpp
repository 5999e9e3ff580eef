// The pool of KV cache blocks: a free list and a reference count per block, so sequences can
// share blocks (a forked beam, a cached prompt prefix) and a block returns to the free list when
// its last user lets go. Bookkeeping only: the K/V storage lives in the backend.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::kv {

class BlockPool {
 public:
  explicit BlockPool(std::int32_t num_blocks);

  std::int32_t num_blocks() const { return static_cast<std::int32_t>(ref_counts_.size()); }
  std::int32_t num_free() const { return static_cast<std::int32_t>(free_.size()); }

  // A free block with reference count 1, or nullopt when the pool is exhausted.
  std::optional<std::int32_t> allocate();
  // One more user of an allocated block.
  void add_ref(std::int32_t block);
  // One user fewer; at zero the block is free again.
  void release(std::int32_t block);
  std::int32_t ref_count(std::int32_t block) const { return ref_counts_[static_cast<std::size_t>(block)]; }

 private:
  std::vector<std::int32_t> free_;        // LIFO: recently freed blocks are reused first (warm in cache)
  std::vector<std::int32_t> ref_counts_;  // [num_blocks]
};

}  // namespace kiln::kv
