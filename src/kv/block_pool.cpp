#include "kv/block_pool.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace kiln::kv {

BlockPool::BlockPool(std::int32_t num_blocks)
    : ref_counts_(static_cast<std::size_t>(std::max(num_blocks, 0)), 0),
      cached_(static_cast<std::size_t>(std::max(num_blocks, 0))) {
  if (num_blocks <= 0) fail("the KV cache needs at least one block, got {}", num_blocks);
  free_.reserve(static_cast<std::size_t>(num_blocks));
  for (std::int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);  // hand out 0, 1, 2, ... first
}

std::optional<std::int32_t> BlockPool::allocate() {
  std::int32_t block = 0;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (!idle_.empty()) {
    block = idle_.front();
    idle_.pop_front();
    forget(block);
  } else {
    return std::nullopt;
  }
  ref_counts_[static_cast<std::size_t>(block)] = 1;
  return block;
}

void BlockPool::add_ref(std::int32_t block) {
  KILN_DASSERT(block >= 0 && block < num_blocks() && ref_counts_[static_cast<std::size_t>(block)] > 0);
  ++ref_counts_[static_cast<std::size_t>(block)];
}

void BlockPool::release(std::int32_t block) {
  KILN_DASSERT(block >= 0 && block < num_blocks() && ref_counts_[static_cast<std::size_t>(block)] > 0);
  const auto b = static_cast<std::size_t>(block);
  if (--ref_counts_[b] != 0) return;
  if (cached_[b].valid) {
    cached_[b].idle_position = idle_.insert(idle_.end(), block);
  } else {
    free_.push_back(block);
  }
}

void BlockPool::cache(std::int32_t block, std::uint64_t hash, std::uint64_t parent,
                      std::span<const std::int32_t> tokens) {
  const auto b = static_cast<std::size_t>(block);
  KILN_DASSERT(block >= 0 && block < num_blocks() && ref_counts_[b] > 0);
  if (cached_[b].valid || by_hash_.contains(hash)) return;
  cached_[b].valid = true;
  cached_[b].hash = hash;
  cached_[b].parent = parent;
  cached_[b].tokens.assign(tokens.begin(), tokens.end());
  by_hash_.emplace(hash, block);
  if (recording_) record_stored(hash, parent, tokens);
}

std::optional<std::int32_t> BlockPool::cached_block(std::uint64_t hash, std::uint64_t parent,
                                                    std::span<const std::int32_t> tokens) const {
  const auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  const std::int32_t block = it->second;
  const CachedContent& c = cached_[static_cast<std::size_t>(block)];
  if (c.parent != parent || !std::equal(c.tokens.begin(), c.tokens.end(), tokens.begin(), tokens.end())) {
    return std::nullopt;  // a 64-bit collision: another prefix
  }
  return block;
}

std::optional<std::int32_t> BlockPool::find_cached(std::uint64_t hash, std::uint64_t parent,
                                                   std::span<const std::int32_t> tokens) {
  const std::optional<std::int32_t> block = cached_block(hash, parent, tokens);
  if (!block) return std::nullopt;
  const CachedContent& c = cached_[static_cast<std::size_t>(*block)];
  if (ref_counts_[static_cast<std::size_t>(*block)] == 0) idle_.erase(c.idle_position);
  ++ref_counts_[static_cast<std::size_t>(*block)];
  return block;
}

void BlockPool::forget(std::int32_t block) {
  CachedContent& c = cached_[static_cast<std::size_t>(block)];
  by_hash_.erase(c.hash);
  if (recording_) record_removed(c.hash);
  c = CachedContent{};
}

void BlockPool::record_events(std::uint64_t root_parent) {
  if (!by_hash_.empty()) fail("KV cache events must be recorded from the start: {} blocks are cached", by_hash_.size());
  recording_ = true;
  root_parent_ = root_parent;
  events_.emplace_back(KvAllBlocksCleared{});
}

void BlockPool::record_stored(std::uint64_t hash, std::uint64_t parent, std::span<const std::int32_t> tokens) {
  const auto block_size = static_cast<std::int32_t>(tokens.size());
  auto* last = events_.empty() ? nullptr : std::get_if<KvBlocksStored>(&events_.back());
  if (last == nullptr || last->block_hashes.back() != parent || last->block_size != block_size) {
    KvBlocksStored started;
    started.block_size = block_size;
    if (parent != root_parent_) started.parent_block_hash = parent;
    last = &std::get<KvBlocksStored>(events_.emplace_back(std::move(started)));
  }
  last->block_hashes.push_back(hash);  // a new event's first block, or the next block of its chain
  last->token_ids.insert(last->token_ids.end(), tokens.begin(), tokens.end());
}

void BlockPool::record_removed(std::uint64_t hash) {
  auto* last = events_.empty() ? nullptr : std::get_if<KvBlocksRemoved>(&events_.back());
  if (last == nullptr) last = &std::get<KvBlocksRemoved>(events_.emplace_back(KvBlocksRemoved{}));
  last->block_hashes.push_back(hash);
}

}  // namespace kiln::kv
