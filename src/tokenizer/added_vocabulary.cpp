// HF AddedVocabulary (tokenizer/added_vocabulary.rs): id assignment, the two matching sets, and
// find_matches with its lstrip / rstrip / single_word rules.
#include "tokenizer/added_vocabulary.hpp"

#include <algorithm>

#include "tokenizer/normalizers.hpp"
#include "tokenizer/unicode.hpp"

namespace kiln::tok {
namespace {

bool same_token(const AddedToken& a, const AddedToken& b) {
  return a.content == b.content && a.single_word == b.single_word && a.lstrip == b.lstrip && a.rstrip == b.rstrip &&
         a.normalized == b.normalized && a.special == b.special;
}

// The code point that ends text[0, end).
char32_t last_char_before(std::string_view text, std::size_t end) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return next_code_point(text, start);
}

// Start of the run of White_Space characters that ends text[0, end) (Rust regex `\s*$`).
std::size_t whitespace_run_start(std::string_view text, std::size_t end) {
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    std::size_t probe = start;
    if (!is_white_space(next_code_point(text, probe))) break;
    end = start;
  }
  return end;
}

// End of the run of White_Space characters that starts at text[begin] (Rust regex `^\s*`).
std::size_t whitespace_run_end(std::string_view text, std::size_t begin) {
  while (begin < text.size()) {
    std::size_t next = begin;
    if (!is_white_space(next_code_point(text, next))) break;
    begin = next;
  }
  return begin;
}

}  // namespace

void TokenTrie::insert(std::string_view pattern, std::int32_t id) {
  if (pattern.empty()) return;
  std::int32_t node = 0;
  for (const char c : pattern) {
    const auto byte = static_cast<unsigned char>(c);
    auto it = nodes_[static_cast<std::size_t>(node)].children.find(byte);
    if (it == nodes_[static_cast<std::size_t>(node)].children.end()) {
      nodes_.push_back(Node{});
      const auto child = static_cast<std::int32_t>(nodes_.size() - 1);
      nodes_[static_cast<std::size_t>(node)].children.emplace(byte, child);
      node = child;
    } else {
      node = it->second;
    }
  }
  if (nodes_[static_cast<std::size_t>(node)].id < 0) nodes_[static_cast<std::size_t>(node)].id = id;
  first_byte_[static_cast<unsigned char>(pattern.front())] = true;
}

void TokenTrie::for_each_match(std::string_view text,
                               FunctionRef<void(std::size_t, std::size_t, std::int32_t)> on_match) const {
  if (empty()) return;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    std::int32_t node = 0, best_id = -1;
    std::size_t best_end = 0;
    for (std::size_t j = i; j < text.size(); ++j) {
      const auto& children = nodes_[static_cast<std::size_t>(node)].children;
      const auto it = children.find(static_cast<unsigned char>(text[j]));
      if (it == children.end()) break;
      node = it->second;
      if (nodes_[static_cast<std::size_t>(node)].id >= 0) {
        best_id = nodes_[static_cast<std::size_t>(node)].id;
        best_end = j + 1;
      }
    }
    if (best_id < 0) {
      ++i;
      continue;
    }
    on_match(i, best_end, best_id);
    i = best_end;
  }
}

void AddedVocabulary::add(const std::vector<AddedToken>& tokens,
                          FunctionRef<std::optional<std::int32_t>(std::string_view)> model_id_of,
                          std::int32_t model_size, const Normalizer* normalizer) {
  std::int32_t next_id = model_size;
  if (!tokens_.empty()) {
    std::int32_t max_id = -1;
    for (const auto& [id, token] : tokens_) max_id = std::max(max_id, id);
    next_id = (max_id >= model_size || model_size == 0) ? max_id + 1 : model_size;
  }
  for (const AddedToken& token : tokens) {
    if (token.content.empty()) continue;
    if (auto it = content_to_id_.find(token.content); it != content_to_id_.end()) {
      if (same_token(tokens_.at(it->second), token)) continue;
    }
    std::optional<std::int32_t> id = token_to_id(token.content);
    if (!id) id = model_id_of(token.content);
    if (!id) id = next_id++;
    if (token.normalized && normalizer != nullptr) {
      std::string normalized = token.content;
      normalizer->normalize(normalized);
      if (normalized != token.content) normalized_form_[*id] = std::move(normalized);
    }
    content_to_id_[token.content] = *id;
    if (token.special) special_contents_[token.content] = true;
    if (!tokens_.contains(*id)) ids_in_order_.push_back(*id);
    tokens_[*id] = token;
  }
  std::sort(ids_in_order_.begin(), ids_in_order_.end());
  rebuild_tries();
}

void AddedVocabulary::rebuild_tries() {
  raw_trie_ = TokenTrie();
  normalized_trie_ = TokenTrie();
  for (const std::int32_t id : ids_in_order_) {
    const AddedToken& token = tokens_.at(id);
    if (!token.normalized) {
      raw_trie_.insert(token.content, id);
    } else {
      const auto it = normalized_form_.find(id);
      normalized_trie_.insert(it != normalized_form_.end() ? it->second : token.content, id);
    }
  }
}

void AddedVocabulary::split(std::string_view text, bool normalized_tokens, FunctionRef<void(Split)> on_split) const {
  const TokenTrie& trie = normalized_tokens ? normalized_trie_ : raw_trie_;
  std::size_t start_offset = 0;
  trie.for_each_match(text, [&](std::size_t start, std::size_t stop, std::int32_t id) {
    const AddedToken& token = tokens_.at(id);
    if (token.single_word) {
      const bool space_before = start == 0 || !is_rust_word_char(last_char_before(text, start));
      std::size_t after = stop;
      const bool space_after = stop == text.size() || !is_rust_word_char(next_code_point(text, after));
      if (!space_before || !space_after) return;
    }
    if (token.lstrip) start = std::max(whitespace_run_start(text, start), start_offset);
    if (token.rstrip) stop = whitespace_run_end(text, stop);
    if (start_offset < start) on_split({start_offset, start, -1});
    on_split({start, stop, id});
    start_offset = stop;
  });
  if (start_offset != text.size()) on_split({start_offset, text.size(), -1});
}

std::optional<std::int32_t> AddedVocabulary::token_to_id(std::string_view content) const {
  const auto it = content_to_id_.find(std::string(content));
  if (it == content_to_id_.end()) return std::nullopt;
  return it->second;
}

const AddedToken* AddedVocabulary::token(std::int32_t id) const {
  const auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

const std::string* AddedVocabulary::decode_string(std::int32_t id) const {
  if (const auto it = normalized_form_.find(id); it != normalized_form_.end()) return &it->second;
  const auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second.content;
}

bool AddedVocabulary::is_special_content(std::string_view content) const {
  return special_contents_.contains(std::string(content));
}

}  // namespace kiln::tok
