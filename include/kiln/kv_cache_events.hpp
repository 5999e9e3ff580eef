// What the prefix cache stores and forgets, for routers that send a request to the replica whose
// cache holds its prefix (llm-d, NVIDIA Dynamo). The events are vLLM's KV events: blocks stored
// (full blocks of a prompt or an answer, named by their hash chain), blocks removed (evicted to
// make room) and all blocks cleared (a fresh cache: the engine started). A block's hash names its
// whole prefix: it mixes the parent block's hash with the block's own tokens, so two replicas that
// computed the same prefix report the same hashes. Turned on by PipelineProperties::
// kv_cache_events; read with ContinuousBatchingPipeline::wait_kv_cache_events().
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

namespace kiln {

// Consecutive blocks of one sequence, newly in the cache. token_ids holds block_size tokens for
// each hash, in order; the first block's parent is parent_block_hash (none: it starts a sequence).
struct KvBlocksStored {
  std::vector<std::uint64_t> block_hashes;
  std::optional<std::uint64_t> parent_block_hash;
  std::vector<std::int32_t> token_ids;
  std::int32_t block_size = 0;
};

// Blocks no longer in the cache: their space went to other tokens.
struct KvBlocksRemoved {
  std::vector<std::uint64_t> block_hashes;
};

// The cache holds nothing: forget every block of this replica reported before.
struct KvAllBlocksCleared {};

using KvCacheEvent = std::variant<KvBlocksStored, KvBlocksRemoved, KvAllBlocksCleared>;

// The events of one engine step, in the order they happened.
struct KvCacheEventBatch {
  double timestamp = 0;  // seconds since the Unix epoch, when the step ended
  std::vector<KvCacheEvent> events;
};

}  // namespace kiln
