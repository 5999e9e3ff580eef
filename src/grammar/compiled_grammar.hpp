// A grammar made ready for one tokenizer: its automaton, the vocabulary's trie, and the token
// masks of states already seen. Shared by every request that uses the same grammar and
// tokenizer (grammar_cache.hpp); a lock makes it safe to share across engines.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.hpp"
#include "grammar/stack_automaton.hpp"
#include "grammar/token_trie.hpp"
#include "kiln/tokenizer.hpp"

namespace kiln::grammar {

// A tokenizer as grammars see it: each token's bytes and their trie.
struct GrammarVocabulary {
  explicit GrammarVocabulary(const Tokenizer& tokenizer);

  std::vector<std::optional<std::string>> token_bytes;  // nullopt or empty: never allowed
  TokenTrie trie;

  std::int32_t size() const { return static_cast<std::int32_t>(token_bytes.size()); }
};

class CompiledGrammar {
 public:
  using State = StackAutomaton::State;
  static constexpr State kDead = StackAutomaton::kDead;

  CompiledGrammar(Grammar grammar, std::shared_ptr<const GrammarVocabulary> vocabulary);

  State start() const { return start_; }
  // The state after `token`'s bytes; kDead when the grammar does not allow them.
  State advance(State state, std::int32_t token);
  bool accepts_end(State state);
  bool can_continue(State state);
  // Sets bit t of `words` exactly when token t's bytes may come next (ids past the tokenizer's
  // vocabulary, as in a padded model vocabulary, never).
  void fill_mask(State state, std::span<std::uint32_t> words);

  std::size_t num_states();

 private:
  void walk_trie(State state, std::span<std::uint32_t> words);

  Grammar grammar_;
  std::shared_ptr<const GrammarVocabulary> vocabulary_;
  std::mutex mutex_;
  StackAutomaton automaton_;  // guarded by mutex_, as are the masks
  State start_;
  std::unordered_map<State, std::vector<std::uint32_t>> masks_;
  std::vector<State> walk_states_;  // scratch: the state at each trie depth
};

}  // namespace kiln::grammar
