#include "kv/prefix_cache.hpp"

#include "kv/block_hash.hpp"

namespace kiln::kv {

void hash_blocks(std::vector<std::uint64_t>& hashes, std::span<const std::int32_t> tokens, std::uint64_t salt,
                 std::int32_t block_size, std::size_t num_blocks) {
  const auto size = static_cast<std::size_t>(block_size);
  while (hashes.size() < num_blocks) {
    const std::size_t i = hashes.size();
    hashes.push_back(hash_block(i == 0 ? salt : hashes[i - 1], tokens.subspan(i * size, size)));
  }
}

std::size_t take_cached_prefix(BlockTable& table, const PrefixChain& chain) {
  std::size_t hits = 0;
  for (; hits < chain.hashes.size(); ++hits) {
    const std::optional<std::int32_t> block =
        table.pool().find_cached(chain.hashes[hits], chain.parent(hits), chain.block_tokens(hits));
    if (!block) break;
    table.append(*block);
  }
  return hits;
}

std::size_t count_cached_prefix(const BlockPool& pool, const PrefixChain& chain) {
  std::size_t hits = 0;
  while (hits < chain.hashes.size() && pool.holds(chain.hashes[hits], chain.parent(hits), chain.block_tokens(hits))) {
    ++hits;
  }
  return hits;
}

void cache_blocks(const BlockTable& table, const PrefixChain& chain, std::size_t first, std::size_t last) {
  for (std::size_t i = first; i < last; ++i) {
    table.pool().cache(table.blocks()[i], chain.hashes[i], chain.parent(i), chain.block_tokens(i));
  }
}

}  // namespace kiln::kv
