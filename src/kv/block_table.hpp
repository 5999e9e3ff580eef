// One sequence's view of the KV cache: the blocks holding its positions, in order. It grows as
// the sequence does, shrinks when tokens are rolled back (speculative decoding), and can be
// forked so two sequences share their common blocks; reserve_for_write gives a table private
// copies of shared blocks before it writes into them (copy-on-write).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/block_pool.hpp"

namespace kiln::kv {

// The backend must copy block `src`'s keys and values into block `dst` before the step that
// writes `dst`.
struct BlockCopy {
  std::int32_t src = 0;
  std::int32_t dst = 0;
};

class BlockTable {
 public:
  BlockTable(BlockPool& pool, std::int32_t block_size);
  ~BlockTable();
  BlockTable(BlockTable&& other) noexcept;
  BlockTable& operator=(BlockTable&&) = delete;
  BlockTable(const BlockTable&) = delete;
  BlockTable& operator=(const BlockTable&) = delete;

  // Makes room for `num_tokens` positions. Returns false, changing nothing, when the pool cannot
  // supply the blocks (the scheduler then preempts or waits).
  [[nodiscard]] bool reserve(std::int64_t num_tokens);
  // reserve(end), and every block that positions [first, end) would write and that another
  // table shares (a forked beam's last partial block) or the prefix cache holds (a chat turn
  // resuming inside a cached block) is replaced by a fresh block, the copy to make appended to
  // `copies`. Returns false, changing nothing, when the pool runs dry.
  [[nodiscard]] bool reserve_for_write(std::int64_t first, std::int64_t end, std::vector<BlockCopy>& copies);
  // Keeps only the blocks needed for the first `num_tokens` positions.
  void truncate(std::int64_t num_tokens);
  // Gives every block back.
  void clear();
  // Adds a block the caller holds a reference to (BlockPool::find_cached) after the last one;
  // the table owns that reference now.
  void append(std::int32_t block) { blocks_.push_back(block); }
  BlockPool& pool() const { return *pool_; }
  // A second table sharing all of this one's blocks (each gains a reference).
  BlockTable fork() const;

  std::span<const std::int32_t> blocks() const { return blocks_; }
  std::int64_t capacity_tokens() const { return static_cast<std::int64_t>(blocks_.size()) * block_size_; }
  std::int32_t block_size() const { return block_size_; }

 private:
  BlockPool* pool_;
  std::int32_t block_size_;
  std::vector<std::int32_t> blocks_;
};

}  // namespace kiln::kv
