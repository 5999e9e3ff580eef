// One sequence's view of the KV cache: the blocks holding its positions, in order. It grows as
// the sequence does, shrinks when tokens are rolled back (speculative decoding), and can be
// forked so two sequences share their common blocks (copy-on-write is the caller's duty).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/block_pool.hpp"

namespace kiln::kv {

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
  // Keeps only the blocks needed for the first `num_tokens` positions.
  void truncate(std::int64_t num_tokens);
  // Gives every block back.
  void clear();
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
