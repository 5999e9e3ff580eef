// A KV cache event batch as vLLM publishes it: MessagePack, each struct an array of its fields in
// order and each event tagged with its type's name first (msgspec's array_like, tag=True):
//   [ts, [["BlockStored", [hash, ...], parent_hash | nil, [token, ...], block_size, lora_id, medium],
//         ["BlockRemoved", [hash, ...], medium],
//         ["AllBlocksCleared"], ...]]
// lora_id is always nil (kiln has no adapters); medium names where the KV lives ("CPU", "GPU").
#pragma once

#include <string>
#include <string_view>

#include "kiln/kv_cache_events.hpp"

namespace kiln::server {

std::string encode_kv_event_batch(const KvCacheEventBatch& batch, std::string_view medium);

}  // namespace kiln::server
