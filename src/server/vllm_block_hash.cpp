#include "server/vllm_block_hash.hpp"

#include <string>

namespace kiln::server {
namespace {

// RFC 8949's preferred serialisation of a head: major type and argument, shortest form.
void put_head(std::string& out, int major, std::uint64_t value) {
  const auto type = static_cast<char>(major << 5);
  if (value < 24) {
    out.push_back(static_cast<char>(type | static_cast<char>(value)));
    return;
  }
  const int bytes = value < (1ULL << 8) ? 1 : value < (1ULL << 16) ? 2 : value < (1ULL << 32) ? 4 : 8;
  out.push_back(static_cast<char>(type | (bytes == 1 ? 24 : bytes == 2 ? 25 : bytes == 4 ? 26 : 27)));
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

VllmBlockHash sha256(const std::string& bytes) {
  Sha256 h;
  h.update(bytes);
  return h.digest();
}

}  // namespace

VllmBlockHash vllm_root_hash(std::string_view seed) {
  std::string cbor;
  put_head(cbor, 3, seed.size());  // a text string
  cbor.append(seed);
  return sha256(cbor);
}

VllmBlockHash vllm_block_hash(const VllmBlockHash& parent, std::span<const std::int32_t> tokens) {
  std::string cbor;
  put_head(cbor, 4, 3);  // (parent, tokens, extra_keys)
  put_head(cbor, 2, parent.size());
  cbor.append(reinterpret_cast<const char*>(parent.data()), parent.size());
  put_head(cbor, 4, tokens.size());
  for (const std::int32_t t : tokens) put_head(cbor, 0, static_cast<std::uint32_t>(t));  // ids are >= 0
  cbor.push_back(static_cast<char>(0xf6));                                               // null: no extra keys
  return sha256(cbor);
}

std::vector<VllmBlockHash> VllmBlockHashes::store(const KvBlocksStored& stored) {
  const VllmBlockHash* parent = stored.parent_block_hash ? find(*stored.parent_block_hash) : &root_;
  if (parent == nullptr) return {};
  std::vector<VllmBlockHash> out;
  VllmBlockHash chain = *parent;
  const auto size = static_cast<std::size_t>(stored.block_size);
  for (std::size_t i = 0; i < stored.block_hashes.size(); ++i) {
    chain = vllm_block_hash(chain, std::span(stored.token_ids).subspan(i * size, size));
    names_[stored.block_hashes[i]] = chain;
    out.push_back(chain);
  }
  return out;
}

const VllmBlockHash* VllmBlockHashes::find(std::uint64_t hash) const {
  const auto it = names_.find(hash);
  return it == names_.end() ? nullptr : &it->second;
}

std::vector<VllmBlockHash> VllmBlockHashes::remove(const KvBlocksRemoved& removed) {
  std::vector<VllmBlockHash> out;
  for (const std::uint64_t h : removed.block_hashes) {
    if (const auto it = names_.find(h); it != names_.end()) {
      out.push_back(it->second);
      names_.erase(it);
    }
  }
  return out;
}

}  // namespace kiln::server
