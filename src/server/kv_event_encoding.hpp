// A KV cache event batch on the wire as vLLM 0.28 and later publish it (msgspec: the batch an
// array, each event a map tagged with its type's name under "type"), MessagePack:
//   [ts, [{"type": "BlockStored", "block_hashes": [h, ...], "parent_block_hash": h | nil,
//          "token_ids": [...], "block_size": n, "lora_id": nil, "medium": "GPU", "lora_name": nil},
//         {"type": "BlockRemoved", "block_hashes": [h, ...], "medium": "GPU"},
//         {"type": "AllBlocksCleared"}, ...],
//    0]                                    (data_parallel_rank: kiln serves a model with one engine)
// Hashes are vLLM's sha256_cbor names (32-byte binaries, vllm_block_hash.hpp), translated from
// kiln's with `names`, which the batch updates. medium is the tier vLLM calls "GPU": the engine's
// own KV cache (on the CPU device it lives in host memory; vLLM's "CPU" tier is an offload).
// lora_id and lora_name are nil: kiln has no adapters.
#pragma once

#include <string>

#include "kiln/kv_cache_events.hpp"
#include "server/vllm_block_hash.hpp"

namespace kiln::server {

std::string encode_kv_event_batch(const KvCacheEventBatch& batch, VllmBlockHashes& names);

}  // namespace kiln::server
