// A string -> id table for BPE vocabularies: entries in one vector (first-insertion order) and a
// flat open-addressing index over them, so a load does one allocation per long token instead of
// one node per entry, and a lookup is a hash, a tag compare and (almost always) one string compare.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::tok {

class VocabTable {
 public:
  VocabTable() { rehash(0); }

  // Sizes the index for `entries` without rehashing while they are inserted.
  void reserve(std::size_t entries) {
    tokens_.reserve(entries);
    ids_.reserve(entries);
    if (entries * 2 > slots_.size()) rehash(entries);
  }

  // A later insert of the same token replaces its id (a JSON object's last duplicate key wins).
  void insert_or_assign(std::string&& token, std::int32_t id) {
    if ((tokens_.size() + 1) * 2 > slots_.size()) rehash(slots_.size());
    const std::size_t hash = hash_of(token);
    Slot& slot = probe(token, hash);
    if (slot.entry != kEmpty) {
      ids_[slot.entry] = id;
      return;
    }
    slot = {static_cast<std::uint32_t>(tokens_.size()), tag_of(hash)};
    tokens_.push_back(std::move(token));
    ids_.push_back(id);
  }

  std::optional<std::int32_t> find(std::string_view token) const {
    const std::size_t hash = hash_of(token);
    const std::uint32_t tag = tag_of(hash);
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.entry == kEmpty) return std::nullopt;
      if (slot.tag == tag && tokens_[slot.entry] == token) return ids_[slot.entry];
    }
  }

  // Entries in first-insertion order; their strings never move once the table is complete.
  std::size_t size() const { return tokens_.size(); }
  const std::string& token(std::size_t entry) const { return tokens_[entry]; }
  std::int32_t id(std::size_t entry) const { return ids_[entry]; }

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  struct Slot {
    std::uint32_t entry = kEmpty;  // index into tokens_ / ids_
    std::uint32_t tag = 0;         // high hash bits: most mismatches never touch the string
  };

  static std::size_t hash_of(std::string_view token) { return std::hash<std::string_view>{}(token); }
  static std::uint32_t tag_of(std::size_t hash) { return static_cast<std::uint32_t>(hash >> 32); }

  Slot& probe(std::string_view token, std::size_t hash) {
    const std::uint32_t tag = tag_of(hash);
    std::size_t i = hash & mask_;
    while (slots_[i].entry != kEmpty && (slots_[i].tag != tag || tokens_[slots_[i].entry] != token)) {
      i = (i + 1) & mask_;
    }
    return slots_[i];
  }

  void rehash(std::size_t min_entries) {
    std::size_t capacity = 16;
    while (capacity < min_entries * 2) capacity <<= 1;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (std::size_t entry = 0; entry < tokens_.size(); ++entry) {
      const std::size_t hash = hash_of(tokens_[entry]);
      std::size_t i = hash & mask_;
      while (slots_[i].entry != kEmpty) i = (i + 1) & mask_;
      slots_[i] = {static_cast<std::uint32_t>(entry), tag_of(hash)};
    }
  }

  std::vector<std::string> tokens_;  // [entries]
  std::vector<std::int32_t> ids_;    // [entries]
  std::vector<Slot> slots_;          // [power of two >= 2 * entries]
  std::size_t mask_ = 0;
};

}  // namespace kiln::tok
