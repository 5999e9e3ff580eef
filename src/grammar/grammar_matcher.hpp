// One sequence's place in its grammar: which tokens may come next, the tokens accepted so far
// (each can be rolled back, for speculative decoding's rejected candidates), and whether the
// output may end here. Stop tokens (EOS and the request's stop ids) are allowed exactly where
// the grammar accepts the output as a whole.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "grammar/compiled_grammar.hpp"

namespace kiln::grammar {

class GrammarMatcher {
 public:
  GrammarMatcher(std::shared_ptr<CompiledGrammar> grammar, std::set<std::int32_t> stop_tokens);

  // Sets every logit outside the allowed tokens to -infinity.
  void mask_logits(std::span<float> logits);
  // The allowed tokens as bits ([ceil(vocab / 32)] words), stop tokens included.
  void fill_mask(std::span<std::uint32_t> words);
  bool allows(std::int32_t token);

  // Moves past `token`; false (and no change) when the grammar does not allow it. A stop
  // token is accepted only where the output may end, and ends the matcher.
  bool accept(std::int32_t token);
  // Forgets the last `tokens` accepted tokens.
  void rollback(std::size_t tokens);
  std::size_t num_accepted() const { return states_.size() - 1; }

  // The output so far is a whole sentence of the grammar.
  bool accepts_end();
  // Nothing can follow but a stop token: generation should end here.
  bool must_end();

 private:
  static constexpr CompiledGrammar::State kStopped = -3;  // after a stop token

  CompiledGrammar::State state() const { return states_.back(); }

  std::shared_ptr<CompiledGrammar> grammar_;
  std::set<std::int32_t> stop_tokens_;
  std::vector<CompiledGrammar::State> states_;  // the start, then the state after each accepted token
  std::vector<std::uint32_t> words_;            // scratch mask
};

}  // namespace kiln::grammar
