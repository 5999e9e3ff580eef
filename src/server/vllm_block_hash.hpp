// vLLM's sha256_cbor block hashes, the names KV events give blocks so that a router can compute
// them from a request's token ids (vllm-router's kv_aware policy does). A block's hash is the
// SHA-256 of the canonical CBOR of (parent hash, block tokens, extra keys = null); the first
// block's parent is the SHA-256 of the CBOR of the seed string, vLLM's PYTHONHASHSEED.
// kiln's own prefix cache keys blocks by a cheaper 64-bit chain (kv/block_hash.hpp); the
// publisher translates (VllmBlockHashes).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/kv_cache_events.hpp"
#include "util/sha256.hpp"

namespace kiln::server {

using VllmBlockHash = Sha256::Digest;

VllmBlockHash vllm_root_hash(std::string_view seed);
VllmBlockHash vllm_block_hash(const VllmBlockHash& parent, std::span<const std::int32_t> tokens);

// The vLLM names of the blocks the cache holds, kept up to date from its events: a stored run's
// hashes are chained from its parent's vLLM hash, a removed block's name is forgotten.
class VllmBlockHashes {
 public:
  explicit VllmBlockHashes(std::string_view seed) : root_(vllm_root_hash(seed)) {}

  // The names of a stored run's blocks, in order; empty when its parent is not known (a run
  // whose parent was evicted meanwhile: it is then not reported, never misnamed).
  std::vector<VllmBlockHash> store(const KvBlocksStored& stored);
  // The name of a block the cache holds; null when unknown.
  const VllmBlockHash* find(std::uint64_t hash) const;
  // The names of removed blocks that were known, forgotten now.
  std::vector<VllmBlockHash> remove(const KvBlocksRemoved& removed);
  void clear() { names_.clear(); }

 private:
  VllmBlockHash root_;
  std::unordered_map<std::uint64_t, VllmBlockHash> names_;  // kiln's hash -> vLLM's
};

}  // namespace kiln::server
