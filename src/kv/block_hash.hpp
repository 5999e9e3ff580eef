// The prefix cache's key for a full KV block: a hash chain over token ids. A block's hash mixes
// its parent's hash (the block before it in the sequence; the salt for the first block) with its
// own block_size token ids, so equal hashes mean equal whole prefixes (up to 64-bit collisions,
// which BlockPool::find_cached rules out by comparing the parent hash and the tokens too). The
// salt separates caches whose keys and values differ for the same tokens (model, KV precision).
#pragma once

#include <cstdint>
#include <span>

namespace kiln::kv {

std::uint64_t hash_block(std::uint64_t parent, std::span<const std::int32_t> tokens);

}  // namespace kiln::kv
