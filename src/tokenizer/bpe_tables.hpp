// The two big parts of a BPE tokenizer.json, read straight from the parser's events (no JSON DOM):
// model.vocab as a VocabTable and model.merges as (left, right) strings in rank order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab_table.hpp"

namespace kiln::tok {

// Merge pairs in rank order, their strings packed into one buffer.
class MergeList {
 public:
  void add(std::string_view left, std::string_view right) {
    chars_.append(left);
    bounds_.push_back(static_cast<std::uint32_t>(chars_.size()));
    chars_.append(right);
    bounds_.push_back(static_cast<std::uint32_t>(chars_.size()));
  }
  std::size_t size() const { return (bounds_.size() - 1) / 2; }
  std::string_view left(std::size_t rank) const { return piece(2 * rank); }
  std::string_view right(std::size_t rank) const { return piece(2 * rank + 1); }

 private:
  std::string_view piece(std::size_t i) const {
    return std::string_view(chars_).substr(bounds_[i], bounds_[i + 1] - bounds_[i]);
  }

  std::string chars_;                        // left and right strings of every merge, back to back
  std::vector<std::uint32_t> bounds_ = {0};  // [2 * merges + 1] offsets into chars_
};

// model.vocab and model.merges when they were an object and an array; a field of another shape
// stays in the JSON tree so the model can name the problem.
struct BpeTables {
  bool has_vocab = false;
  VocabTable vocab;
  bool has_merges = false;
  MergeList merges;
};

}  // namespace kiln::tok
