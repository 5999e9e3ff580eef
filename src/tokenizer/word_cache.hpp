// The pre-token cache: the ids a model produced for a piece, per thread and per model, so
// repeated words skip BPE. Bounded (cleared when full), never shared between threads, so no lock
// is taken on the encode path. Only pieces shorter than kMaxPieceBytes are cached, like HF.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln::tok {

class WordCache {
 public:
  static constexpr std::size_t kMaxPieceBytes = 256;
  static constexpr std::size_t kCapacity = 1 << 16;

  // The cache of model `model_id` for the calling thread.
  static WordCache& for_thread(std::uint64_t model_id);

  const std::vector<std::int32_t>* find(std::string_view piece) const {
    const auto it = map_.find(piece);
    return it == map_.end() ? nullptr : &it->second;
  }
  void insert(std::string_view piece, std::span<const std::int32_t> ids) {
    if (piece.size() >= kMaxPieceBytes) return;
    if (map_.size() >= kCapacity) map_.clear();
    map_.emplace(std::string(piece), std::vector<std::int32_t>(ids.begin(), ids.end()));
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::vector<std::int32_t>, Hash, std::equal_to<>> map_;
};

// A process-unique id for a model instance (the key of its per-thread caches).
std::uint64_t next_model_id();

}  // namespace kiln::tok
