#include "kv/block_table.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace kiln::kv {

BlockTable::BlockTable(BlockPool& pool, std::int32_t block_size) : pool_(&pool), block_size_(block_size) {
  if (block_size <= 0) fail("KV block size must be positive, got {}", block_size);
}

BlockTable::~BlockTable() { clear(); }

BlockTable::BlockTable(BlockTable&& other) noexcept
    : pool_(other.pool_), block_size_(other.block_size_), blocks_(std::move(other.blocks_)) {
  other.blocks_.clear();
}

bool BlockTable::reserve(std::int64_t num_tokens) {
  const std::int64_t needed = (num_tokens + block_size_ - 1) / block_size_;
  const std::size_t before = blocks_.size();
  while (static_cast<std::int64_t>(blocks_.size()) < needed) {
    const auto block = pool_->allocate();
    if (!block) {
      truncate(static_cast<std::int64_t>(before) * block_size_);
      return false;
    }
    blocks_.push_back(*block);
  }
  return true;
}

bool BlockTable::reserve_for_write(std::int64_t first, std::int64_t end, std::vector<BlockCopy>& copies) {
  const std::size_t blocks_before = blocks_.size();
  if (!reserve(end)) return false;
  // Only blocks that existed before reserve() can be shared.
  const auto first_block = static_cast<std::size_t>(first / block_size_);
  const std::size_t copies_before = copies.size();
  for (std::size_t i = first_block; i < blocks_before && static_cast<std::int64_t>(i) * block_size_ < end; ++i) {
    if (pool_->ref_count(blocks_[i]) == 1 && !pool_->is_cached(blocks_[i])) continue;
    const auto fresh = pool_->allocate();
    if (!fresh) {
      // Undo: give back the private copies made so far and the blocks reserve() added.
      for (std::size_t c = copies_before; c < copies.size(); ++c) {
        const auto at = std::find(blocks_.begin(), blocks_.end(), copies[c].dst);
        pool_->add_ref(copies[c].src);
        pool_->release(*at);
        *at = copies[c].src;
      }
      copies.resize(copies_before);
      truncate(static_cast<std::int64_t>(blocks_before) * block_size_);
      return false;
    }
    copies.push_back({blocks_[i], *fresh});
    pool_->release(blocks_[i]);  // still held by the other table(s), or idle in the prefix cache
    blocks_[i] = *fresh;
  }
  return true;
}

void BlockTable::truncate(std::int64_t num_tokens) {
  const std::int64_t keep = (num_tokens + block_size_ - 1) / block_size_;
  while (static_cast<std::int64_t>(blocks_.size()) > keep) {
    pool_->release(blocks_.back());
    blocks_.pop_back();
  }
}

void BlockTable::clear() { truncate(0); }

BlockTable BlockTable::fork() const {
  BlockTable copy(*pool_, block_size_);
  copy.blocks_ = blocks_;
  for (std::int32_t b : blocks_) pool_->add_ref(b);
  return copy;
}

}  // namespace kiln::kv
