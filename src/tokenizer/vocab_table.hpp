// A string -> id table for BPE vocabularies: entries in one vector (first-insertion order) and a
// flat open-addressing index of 16-byte slots that hold the id and tokens of up to 11 bytes in
// place, so a lookup is one cache miss (two for a longer token) and the load makes no nodes.
// NOTE: loading is bound by those misses (~100 ns each on a busy VM); the batch calls below
// prefetch a block of slots first so the misses overlap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::tok {

class VocabTable {
 public:
  static constexpr std::size_t kBatch = 16;  // lookups in flight per batch

  VocabTable() { rehash(0); }

  // Sizes the index for `entries` without rehashing while they are inserted.
  void reserve(std::size_t entries) {
    tokens_.reserve(entries);
    ids_.reserve(entries);
    if (entries * 2 > slots_.size()) rehash(entries);
  }

  // A later insert of the same token replaces its id (a JSON object's last duplicate key wins).
  void insert_or_assign(std::string&& token, std::int32_t id) {
    std::pair<std::string, std::int32_t> one{std::move(token), id};
    insert_batch(std::span(&one, 1));
  }
  // The same for a batch (at most kBatch); the strings are moved from.
  void insert_batch(std::span<std::pair<std::string, std::int32_t>> batch) {
    if ((tokens_.size() + batch.size()) * 2 > slots_.size())
      rehash(std::max(slots_.size(), (tokens_.size() + batch.size()) * 2));
    std::size_t hashes[kBatch];
    for (std::size_t i = 0; i < batch.size(); ++i) prefetch(hashes[i] = hash_of(batch[i].first));
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto& [token, id] = batch[i];
      Slot& slot = slots_[probe(token, hashes[i])];
      if (slot.id >= 0) {  // a duplicate: its entry's id in ids_ is stale from now on
        slot.id = id;
        has_duplicates_ = true;
        continue;
      }
      place(slot, token, static_cast<std::uint32_t>(tokens_.size()), id);
      tokens_.push_back(std::move(token));
      ids_.push_back(id);
    }
  }

  std::optional<std::int32_t> find(std::string_view token) const { return find(token, hash_of(token)); }
  // With a hash_of(token) computed (and prefetch()ed) earlier.
  std::optional<std::int32_t> find(std::string_view token, std::size_t hash) const {
    const Slot& slot = slots_[probe(token, hash)];
    if (slot.id < 0) return std::nullopt;
    return slot.id;
  }
  static std::size_t hash_of(std::string_view token) { return std::hash<std::string_view>{}(token); }
  void prefetch(std::size_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }

  // Entries in first-insertion order; their strings never move once the table is complete.
  std::size_t size() const { return tokens_.size(); }
  const std::string& token(std::size_t entry) const { return tokens_[entry]; }
  std::int32_t id(std::size_t entry) const { return has_duplicates_ ? *find(tokens_[entry]) : ids_[entry]; }

 private:
  static constexpr std::size_t kInline = 11;  // tokens up to this many bytes live in the slot
  static constexpr std::size_t kPrefix = 7;   // a longer token keeps its first bytes and entry
  static constexpr std::uint8_t kLong = 0xFF;
  struct Slot {
    std::int32_t id = -1;      // -1: empty
    std::uint8_t length = 0;   // the token's bytes, or kLong
    char bytes[kInline] = {};  // the token (zero-padded), or kPrefix bytes then the entry (uint32)
  };
  static_assert(sizeof(Slot) == 16);
  // A token in slot form: the 8 bytes from `length` on, and the 4 after them.
  struct Key {
    std::uint64_t head;
    std::uint32_t tail;
  };

  static Key key_of(std::string_view token) {
    char form[12] = {};
    const bool is_long = token.size() > kInline;
    form[0] = static_cast<char>(is_long ? kLong : token.size());
    std::memcpy(form + 1, token.data(), is_long ? kPrefix : token.size());
    Key key;
    std::memcpy(&key.head, form, 8);
    std::memcpy(&key.tail, form + 8, 4);
    if (is_long) key.tail = 0;  // the entry sits there; compared through tokens_ instead
    return key;
  }
  static std::uint64_t head_of(const Slot& slot) {
    std::uint64_t head;
    std::memcpy(&head, &slot.length, 8);
    return head;
  }
  static std::uint32_t tail_of(const Slot& slot) {
    std::uint32_t tail;
    std::memcpy(&tail, slot.bytes + kPrefix, 4);
    return tail;
  }

  bool matches(const Slot& slot, const Key& key, std::string_view token) const {
    if (head_of(slot) != key.head) return false;
    if (slot.length != kLong) return tail_of(slot) == key.tail;
    return tokens_[tail_of(slot)] == token;
  }

  // The slot holding `token`, or the empty slot where it would go.
  std::size_t probe(std::string_view token, std::size_t hash) const {
    const Key key = key_of(token);
    std::size_t i = hash & mask_;
    while (slots_[i].id >= 0 && !matches(slots_[i], key, token)) i = (i + 1) & mask_;
    return i;
  }

  static void place(Slot& slot, std::string_view token, std::uint32_t entry, std::int32_t id) {
    const Key key = key_of(token);
    slot.id = id;
    std::memcpy(&slot.length, &key.head, 8);
    if (token.size() > kInline) {
      std::memcpy(slot.bytes + kPrefix, &entry, 4);
    } else {
      std::memcpy(slot.bytes + kPrefix, &key.tail, 4);
    }
  }

  // The token a full slot holds: in place, or tokens_[entry] when long.
  std::string_view token_of(const Slot& slot) const {
    if (slot.length != kLong) return std::string_view(slot.bytes, slot.length);
    return tokens_[tail_of(slot)];
  }

  void rehash(std::size_t min_entries) {
    std::size_t capacity = 16;
    while (capacity < min_entries * 2) capacity <<= 1;
    const std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    // Slots move whole (ids included, so applied duplicates stay applied), a batch at a time.
    std::size_t batch[kBatch], hashes[kBatch], count = 0;
    auto flush = [&] {
      for (std::size_t i = 0; i < count; ++i) {
        std::size_t j = hashes[i] & mask_;
        while (slots_[j].id >= 0) j = (j + 1) & mask_;
        slots_[j] = old[batch[i]];
      }
      count = 0;
    };
    for (std::size_t i = 0; i < old.size(); ++i) {
      if (old[i].id < 0) continue;
      batch[count] = i;
      prefetch(hashes[count] = hash_of(token_of(old[i])));
      if (++count == kBatch) flush();
    }
    flush();
  }

  std::vector<std::string> tokens_;  // [entries]
  std::vector<std::int32_t> ids_;    // [entries] the id at insertion; see has_duplicates_
  std::vector<Slot> slots_;          // [power of two >= 2 * entries]
  std::size_t mask_ = 0;
  bool has_duplicates_ = false;
};

}  // namespace kiln::tok
