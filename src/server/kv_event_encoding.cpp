#include "server/kv_event_encoding.hpp"

#include <msgpack.hpp>
#include <type_traits>

namespace kiln::server {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_string(Packer& out, std::string_view s) {
  out.pack_str(static_cast<std::uint32_t>(s.size()));
  out.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

template <typename T>
void pack_array(Packer& out, const std::vector<T>& values) {
  out.pack_array(static_cast<std::uint32_t>(values.size()));
  for (const T v : values) out.pack(v);
}

void pack_event(Packer& out, const KvCacheEvent& event, std::string_view medium) {
  std::visit(
      [&](const auto& e) {
        using Event = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<Event, KvBlocksStored>) {
          out.pack_array(7);
          pack_string(out, "BlockStored");
          pack_array(out, e.block_hashes);
          if (e.parent_block_hash) {
            out.pack(*e.parent_block_hash);
          } else {
            out.pack_nil();
          }
          pack_array(out, e.token_ids);
          out.pack(e.block_size);
          out.pack_nil();  // lora_id
          pack_string(out, medium);
        } else if constexpr (std::is_same_v<Event, KvBlocksRemoved>) {
          out.pack_array(3);
          pack_string(out, "BlockRemoved");
          pack_array(out, e.block_hashes);
          pack_string(out, medium);
        } else {
          out.pack_array(1);
          pack_string(out, "AllBlocksCleared");
        }
      },
      event);
}

}  // namespace

std::string encode_kv_event_batch(const KvCacheEventBatch& batch, std::string_view medium) {
  msgpack::sbuffer buffer;
  Packer out(buffer);
  out.pack_array(2);
  out.pack(batch.timestamp);
  out.pack_array(static_cast<std::uint32_t>(batch.events.size()));
  for (const KvCacheEvent& event : batch.events) pack_event(out, event, medium);
  return {buffer.data(), buffer.size()};
}

}  // namespace kiln::server
