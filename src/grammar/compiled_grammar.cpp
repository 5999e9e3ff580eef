#include "grammar/compiled_grammar.hpp"

#include <algorithm>

#include "tokenizer/token_bytes.hpp"

namespace kiln::grammar {
namespace {

// Masks are kept for this many states (16 KiB each at a 128k vocabulary); past it, the
// cache starts over. JSON output revisits few states, so this bound is rarely reached.
constexpr std::size_t kMaxCachedMasks = 2048;

}  // namespace

GrammarVocabulary::GrammarVocabulary(const Tokenizer& tokenizer)
    : token_bytes(tok::token_bytes(tokenizer)), trie(token_bytes) {}

namespace {

// The first states are computed while the grammar is compiled (on the caller's thread, a server's
// HTTP thread), so that a too ambiguous grammar is refused there rather than met by the engine.
constexpr std::size_t kStatesExploredAtCompile = 32;

}  // namespace

CompiledGrammar::CompiledGrammar(Grammar grammar, std::shared_ptr<const GrammarVocabulary> vocabulary)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      automaton_(grammar_),
      start_(automaton_.start()) {
  automaton_.explore(kStatesExploredAtCompile);
}

CompiledGrammar::State CompiledGrammar::advance(State state, std::int32_t token) {
  if (token < 0 || token >= vocabulary_->size()) return kDead;
  const auto& bytes = vocabulary_->token_bytes[static_cast<std::size_t>(token)];
  if (!bytes || bytes->empty()) return kDead;
  const std::lock_guard lock(mutex_);
  return automaton_.advance(state, *bytes);
}

bool CompiledGrammar::accepts_end(State state) {
  const std::lock_guard lock(mutex_);
  return automaton_.accepts_end(state);
}

bool CompiledGrammar::can_continue(State state) {
  const std::lock_guard lock(mutex_);
  return automaton_.can_continue(state);
}

std::size_t CompiledGrammar::num_states() {
  const std::lock_guard lock(mutex_);
  return automaton_.num_states();
}

void CompiledGrammar::fill_mask(State state, std::span<std::uint32_t> words) {
  const std::lock_guard lock(mutex_);
  auto cached = masks_.find(state);
  if (cached == masks_.end()) {
    if (masks_.size() >= kMaxCachedMasks) masks_.clear();
    std::vector<std::uint32_t> mask((static_cast<std::size_t>(vocabulary_->size()) + 31) / 32);
    walk_trie(state, mask);
    cached = masks_.emplace(state, std::move(mask)).first;
  }
  // The model's vocabulary may be padded past the tokenizer's: those ids are never allowed.
  const std::size_t n = std::min(words.size(), cached->second.size());
  std::copy_n(cached->second.begin(), n, words.begin());
  std::fill(words.begin() + static_cast<std::ptrdiff_t>(n), words.end(), 0u);
}

// Depth-first over the trie in preorder: a node's state is its parent's advanced by its byte;
// a dead state skips the node's whole subtree.
void CompiledGrammar::walk_trie(State state, std::span<std::uint32_t> words) {
  std::fill(words.begin(), words.end(), 0u);
  const TokenTrie& trie = vocabulary_->trie;
  walk_states_.resize(trie.max_depth() + 1);
  walk_states_[0] = state;
  const auto& nodes = trie.nodes();
  for (std::size_t i = 0; i < nodes.size();) {
    const TokenTrie::Node& node = nodes[i];
    const State next = automaton_.advance(walk_states_[node.depth - 1], node.byte);
    if (next == kDead) {
      i = static_cast<std::size_t>(node.subtree_end);
      continue;
    }
    walk_states_[node.depth] = next;
    for (const std::int32_t token : trie.tokens_at(node)) words[token >> 5] |= 1u << (token & 31);
    ++i;
  }
}

}  // namespace kiln::grammar
