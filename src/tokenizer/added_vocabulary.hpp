// Added tokens (tokenizer.json "added_tokens"): ids assigned as HF add_tokens does, and the
// splitting of text around them with leftmost-longest matching and the lstrip / rstrip /
// single_word rules. Tokens with normalized=false are matched on the raw text, the others on
// the normalized text (as HF's extract_and_normalize does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/function_ref.hpp"

namespace kiln::tok {

class Normalizer;

struct AddedToken {
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

// Leftmost-longest matching of a fixed set of strings (HF uses an Aho-Corasick automaton in
// that mode; added-token sets are small, so a byte trie walked from each candidate start with a
// first-byte filter is as fast in practice).
class TokenTrie {
 public:
  void insert(std::string_view pattern, std::int32_t id);
  bool empty() const { return nodes_.size() <= 1; }
  // Calls on_match(start, end, id) for each leftmost-longest, non-overlapping match.
  void for_each_match(std::string_view text, FunctionRef<void(std::size_t, std::size_t, std::int32_t)> on_match) const;

 private:
  struct Node {
    std::unordered_map<unsigned char, std::int32_t> children;
    std::int32_t id = -1;  // token id when a pattern ends here
  };
  std::vector<Node> nodes_{Node{}};
  bool first_byte_[256] = {};
};

class AddedVocabulary {
 public:
  // Adds tokens in order. An id comes from `model_id_of(content)` when the model knows the
  // content, else the next free id after max(model size, largest added id), as HF assigns them.
  // `normalizer` (may be null) gives the form normalized tokens are matched in.
  void add(const std::vector<AddedToken>& tokens,
           FunctionRef<std::optional<std::int32_t>(std::string_view)> model_id_of, std::int32_t model_size,
           const Normalizer* normalizer);

  // One piece of text between added tokens ([begin, end) of the searched text), or a token.
  struct Split {
    std::size_t begin;
    std::size_t end;
    std::int32_t token_id;  // -1: text to normalize / pre-tokenize
  };
  // Splits `text` around the raw (normalized=false) or the normalized tokens.
  void split(std::string_view text, bool normalized_tokens, FunctionRef<void(Split)> on_split) const;

  std::optional<std::int32_t> token_to_id(std::string_view content) const;
  const AddedToken* token(std::int32_t id) const;
  // The string decode uses for `id`: the normalized form for normalized tokens.
  const std::string* decode_string(std::int32_t id) const;
  bool is_special_content(std::string_view content) const;
  const std::vector<std::int32_t>& ids() const { return ids_in_order_; }

 private:
  void rebuild_tries();

  std::unordered_map<std::string, std::int32_t> content_to_id_;
  std::unordered_map<std::int32_t, AddedToken> tokens_;
  std::unordered_map<std::int32_t, std::string> normalized_form_;
  std::unordered_map<std::string, bool> special_contents_;
  std::vector<std::int32_t> ids_in_order_;
  TokenTrie raw_trie_, normalized_trie_;
};

}  // namespace kiln::tok
