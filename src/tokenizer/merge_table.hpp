// BPE merge ranks: (left id, right id) -> (rank, merged id) in one open-addressing table, so the
// lookup in the merge loop is a multiply, a shift and (almost always) one cache line.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::tok {

class MergeTable {
 public:
  struct Entry {
    std::uint64_t key = kEmpty;
    std::uint32_t rank = 0;
    std::int32_t merged_id = 0;
  };

  explicit MergeTable(std::size_t expected_entries = 0) { rehash(expected_entries); }

  // A later insert of the same pair replaces the earlier one (as HF's HashMap collect does).
  void insert_or_assign(std::int32_t left, std::int32_t right, std::uint32_t rank, std::int32_t merged_id) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size());
    Entry& slot = probe(pack(left, right));
    if (slot.key == kEmpty) ++size_;
    slot = {pack(left, right), rank, merged_id};
  }

  // Loads the pair's home slot ahead of an insert (a table of 280k merges is ~16 MB: every
  // insert is a cache miss, and a batch of prefetches overlaps them).
  void prefetch(std::int32_t left, std::int32_t right) const { __builtin_prefetch(&slots_[index(pack(left, right))]); }

  const Entry* find(std::int32_t left, std::int32_t right) const {
    const std::uint64_t key = pack(left, right);
    for (std::size_t i = index(key);; i = (i + 1) & mask_) {
      const Entry& slot = slots_[i];
      if (slot.key == key) return &slot;
      if (slot.key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // ids are < 2^31, never all ones

  static std::uint64_t pack(std::int32_t left, std::int32_t right) {
    return (std::uint64_t{static_cast<std::uint32_t>(left)} << 32) | static_cast<std::uint32_t>(right);
  }
  std::size_t index(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  Entry& probe(std::uint64_t key) {
    std::size_t i = index(key);
    while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask_;
    return slots_[i];
  }
  void rehash(std::size_t min_entries) {
    std::size_t capacity = 16;
    int bits = 4;
    while (capacity < min_entries * 2) capacity <<= 1, ++bits;
    std::vector<Entry> old = std::move(slots_);
    slots_.assign(capacity, Entry{});
    mask_ = capacity - 1;
    shift_ = 64 - bits;
    for (const Entry& e : old) {
      if (e.key != kEmpty) probe(e.key) = e;
    }
  }

  std::vector<Entry> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace kiln::tok
