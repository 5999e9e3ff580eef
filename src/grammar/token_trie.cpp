#include "grammar/token_trie.hpp"

#include <algorithm>
#include <string_view>

namespace kiln::grammar {

TokenTrie::TokenTrie(const std::vector<std::optional<std::string>>& tokens) {
  std::vector<std::int32_t> order;
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (tokens[id] && !tokens[id]->empty()) order.push_back(static_cast<std::int32_t>(id));
  }
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return *tokens[a] < *tokens[b]; });
  // Sorted strings visit the trie in preorder: each one shares a prefix with the one before
  // and opens new nodes for the rest.
  std::vector<std::int32_t> path;  // open nodes, by depth - 1
  std::string_view previous;
  for (const std::int32_t id : order) {
    const std::string_view bytes = *tokens[id];
    std::size_t common = 0;
    while (common < std::min(bytes.size(), previous.size()) && bytes[common] == previous[common]) ++common;
    while (path.size() > common) {
      nodes_[path.back()].subtree_end = static_cast<std::int32_t>(nodes_.size());
      path.pop_back();
    }
    for (std::size_t depth = common; depth < bytes.size(); ++depth) {
      path.push_back(static_cast<std::int32_t>(nodes_.size()));
      nodes_.push_back({static_cast<std::uint8_t>(bytes[depth]), static_cast<std::uint32_t>(depth + 1), 0,
                        static_cast<std::int32_t>(token_ids_.size()), static_cast<std::int32_t>(token_ids_.size())});
    }
    Node& last = nodes_[path.back()];
    token_ids_.push_back(id);
    ++last.tokens_end;
    max_depth_ = std::max(max_depth_, static_cast<std::uint32_t>(bytes.size()));
    previous = bytes;
  }
  for (const std::int32_t node : path) nodes_[node].subtree_end = static_cast<std::int32_t>(nodes_.size());
}

}  // namespace kiln::grammar
