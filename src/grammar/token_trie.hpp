// A vocabulary's byte strings as a trie laid out in preorder: each node knows where its
// subtree ends, so a walk that finds a byte rejected skips every token below it in one jump.
// Built once per tokenizer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::grammar {

class TokenTrie {
 public:
  struct Node {
    std::uint8_t byte = 0;
    std::uint32_t depth = 0;        // 1 for a first byte
    std::int32_t subtree_end = 0;   // one past the last node below this one
    std::int32_t tokens_begin = 0;  // the tokens whose bytes end here: token_ids()[begin, end)
    std::int32_t tokens_end = 0;
  };

  // `tokens` [vocab]: nullopt or empty entries are left out (never allowed by a mask).
  explicit TokenTrie(const std::vector<std::optional<std::string>>& tokens);

  const std::vector<Node>& nodes() const { return nodes_; }
  std::span<const std::int32_t> tokens_at(const Node& node) const {
    return std::span(token_ids_)
        .subspan(static_cast<std::size_t>(node.tokens_begin),
                 static_cast<std::size_t>(node.tokens_end - node.tokens_begin));
  }
  std::uint32_t max_depth() const { return max_depth_; }

 private:
  std::vector<Node> nodes_;
  std::vector<std::int32_t> token_ids_;
  std::uint32_t max_depth_ = 0;
};

}  // namespace kiln::grammar
