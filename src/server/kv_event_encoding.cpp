#include "server/kv_event_encoding.hpp"

#include <msgpack.hpp>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

namespace kiln::server {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

// One event as it goes out: kiln's hashes replaced by vLLM's names.
struct Stored {
  std::vector<VllmBlockHash> hashes;
  std::optional<VllmBlockHash> parent;
  const KvBlocksStored* event = nullptr;
};
struct Removed {
  std::vector<VllmBlockHash> hashes;
};
using WireEvent = std::variant<Stored, Removed, KvAllBlocksCleared>;

void pack_string(Packer& out, std::string_view s) {
  out.pack_str(static_cast<std::uint32_t>(s.size()));
  out.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

void pack_hash(Packer& out, const VllmBlockHash& h) {
  out.pack_bin(static_cast<std::uint32_t>(h.size()));
  out.pack_bin_body(reinterpret_cast<const char*>(h.data()), static_cast<std::uint32_t>(h.size()));
}

void pack_hashes(Packer& out, const std::vector<VllmBlockHash>& hashes) {
  out.pack_array(static_cast<std::uint32_t>(hashes.size()));
  for (const VllmBlockHash& h : hashes) pack_hash(out, h);
}

// The batch's events in vLLM's names; a stored run or removal none of whose blocks has a name
// (its parent was evicted before it was stored) is left out.
std::vector<WireEvent> translate(const KvCacheEventBatch& batch, VllmBlockHashes& names) {
  std::vector<WireEvent> out;
  for (const KvCacheEvent& event : batch.events) {
    if (const auto* s = std::get_if<KvBlocksStored>(&event)) {
      std::vector<VllmBlockHash> hashes = names.store(*s);
      if (hashes.empty()) continue;  // its parent is not known
      const std::optional<VllmBlockHash> parent =
          s->parent_block_hash ? std::optional(*names.find(*s->parent_block_hash)) : std::nullopt;
      out.emplace_back(Stored{.hashes = std::move(hashes), .parent = parent, .event = s});
    } else if (const auto* r = std::get_if<KvBlocksRemoved>(&event)) {
      std::vector<VllmBlockHash> hashes = names.remove(*r);
      if (!hashes.empty()) out.emplace_back(Removed{std::move(hashes)});
    } else {
      names.clear();
      out.emplace_back(KvAllBlocksCleared{});
    }
  }
  return out;
}

void pack_event(Packer& out, const WireEvent& event) {
  if (const auto* s = std::get_if<Stored>(&event)) {
    out.pack_map(8);
    pack_string(out, "type");
    pack_string(out, "BlockStored");
    pack_string(out, "block_hashes");
    pack_hashes(out, s->hashes);
    pack_string(out, "parent_block_hash");
    if (s->parent) {
      pack_hash(out, *s->parent);
    } else {
      out.pack_nil();
    }
    pack_string(out, "token_ids");
    out.pack_array(static_cast<std::uint32_t>(s->event->token_ids.size()));
    for (const std::int32_t t : s->event->token_ids) out.pack(t);
    pack_string(out, "block_size");
    out.pack(s->event->block_size);
    pack_string(out, "lora_id");
    out.pack_nil();
    pack_string(out, "medium");
    pack_string(out, "GPU");
    pack_string(out, "lora_name");
    out.pack_nil();
  } else if (const auto* r = std::get_if<Removed>(&event)) {
    out.pack_map(3);
    pack_string(out, "type");
    pack_string(out, "BlockRemoved");
    pack_string(out, "block_hashes");
    pack_hashes(out, r->hashes);
    pack_string(out, "medium");
    pack_string(out, "GPU");
  } else {
    out.pack_map(1);
    pack_string(out, "type");
    pack_string(out, "AllBlocksCleared");
  }
}

}  // namespace

std::string encode_kv_event_batch(const KvCacheEventBatch& batch, VllmBlockHashes& names) {
  const std::vector<WireEvent> events = translate(batch, names);
  msgpack::sbuffer buffer;
  Packer out(buffer);
  out.pack_array(3);
  out.pack(batch.timestamp);
  out.pack_array(static_cast<std::uint32_t>(events.size()));
  for (const WireEvent& event : events) pack_event(out, event);
  out.pack(0);  // data_parallel_rank
  return {buffer.data(), buffer.size()};
}

}  // namespace kiln::server
