// Prefix caching over one sequence's block table: the sequence's leading full blocks, named by a
// hash chain (block_hash.hpp), are looked up in and added to the table's pool. The engine runs it
// on the main model's KV cache and, with the same hash chain, on the draft model's own pool (a
// hash names a token prefix; each pool holds one model's keys and values, so they cannot mix).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/block_table.hpp"

namespace kiln::kv {

// A sequence's tokens as the cache names them: block i holds tokens [i * block_size, (i + 1) *
// block_size) and its hash is hashes[i], chained from `salt` (block 0's parent).
struct PrefixChain {
  std::span<const std::int32_t> tokens;
  std::span<const std::uint64_t> hashes;
  std::uint64_t salt = 0;
  std::int32_t block_size = 0;

  std::uint64_t parent(std::size_t block) const { return block == 0 ? salt : hashes[block - 1]; }
  std::span<const std::int32_t> block_tokens(std::size_t block) const {
    const auto size = static_cast<std::size_t>(block_size);
    return tokens.subspan(block * size, size);
  }
};

// Extends `hashes` to the first `num_blocks` full blocks of `tokens`.
void hash_blocks(std::vector<std::uint64_t>& hashes, std::span<const std::int32_t> tokens, std::uint64_t salt,
                 std::int32_t block_size, std::size_t num_blocks);

// Appends to an empty `table` the cached blocks of the chain's longest cached prefix (of at most
// chain.hashes.size() blocks), each with a reference the table now owns. Returns how many.
std::size_t take_cached_prefix(BlockTable& table, const PrefixChain& chain);

// How many of the chain's leading blocks `pool` holds (nothing changes).
std::size_t count_cached_prefix(const BlockPool& pool, const PrefixChain& chain);

// Puts the table's blocks [first, last) in the cache as holding the chain's blocks [first, last).
void cache_blocks(const BlockTable& table, const PrefixChain& chain, std::size_t first, std::size_t last);

}  // namespace kiln::kv
