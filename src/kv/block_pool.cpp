#include "kv/block_pool.hpp"

#include "util/error.hpp"

namespace kiln::kv {

BlockPool::BlockPool(std::int32_t num_blocks) : ref_counts_(static_cast<std::size_t>(num_blocks), 0) {
  if (num_blocks <= 0) fail("the KV cache needs at least one block, got {}", num_blocks);
  free_.reserve(static_cast<std::size_t>(num_blocks));
  for (std::int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);  // hand out 0, 1, 2, ... first
}

std::optional<std::int32_t> BlockPool::allocate() {
  if (free_.empty()) return std::nullopt;
  const std::int32_t block = free_.back();
  free_.pop_back();
  ref_counts_[static_cast<std::size_t>(block)] = 1;
  return block;
}

void BlockPool::add_ref(std::int32_t block) {
  KILN_DASSERT(block >= 0 && block < num_blocks() && ref_counts_[static_cast<std::size_t>(block)] > 0);
  ++ref_counts_[static_cast<std::size_t>(block)];
}

void BlockPool::release(std::int32_t block) {
  KILN_DASSERT(block >= 0 && block < num_blocks() && ref_counts_[static_cast<std::size_t>(block)] > 0);
  if (--ref_counts_[static_cast<std::size_t>(block)] == 0) free_.push_back(block);
}

}  // namespace kiln::kv
