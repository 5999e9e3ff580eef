#include "grammar/grammar_matcher.hpp"

#include <algorithm>
#include <limits>

namespace kiln::grammar {

GrammarMatcher::GrammarMatcher(std::shared_ptr<CompiledGrammar> grammar, std::set<std::int32_t> stop_tokens)
    : grammar_(std::move(grammar)), stop_tokens_(std::move(stop_tokens)) {
  states_.push_back(grammar_->start());
}

void GrammarMatcher::fill_mask(std::span<std::uint32_t> words) {
  if (state() == kStopped) {
    std::fill(words.begin(), words.end(), 0u);
    return;
  }
  grammar_->fill_mask(state(), words);
  // A stop token is allowed by where the output stands, not by its bytes.
  const bool may_end = grammar_->accepts_end(state());
  for (const std::int32_t token : stop_tokens_) {
    const auto word = static_cast<std::size_t>(token >> 5);
    if (token < 0 || word >= words.size()) continue;
    if (may_end) {
      words[word] |= 1u << (token & 31);
    } else {
      words[word] &= ~(1u << (token & 31));
    }
  }
}

void GrammarMatcher::mask_logits(std::span<float> logits) {
  words_.resize((logits.size() + 31) / 32);
  fill_mask(words_);
  constexpr float kBanned = -std::numeric_limits<float>::infinity();
  for (std::size_t word = 0; word < words_.size(); ++word) {
    const std::uint32_t bits = words_[word];
    if (bits == ~0u) continue;
    const std::size_t end = std::min(logits.size(), word * 32 + 32);
    for (std::size_t i = word * 32; i < end; ++i) {
      if (((bits >> (i & 31)) & 1u) == 0) logits[i] = kBanned;
    }
  }
}

bool GrammarMatcher::allows(std::int32_t token) {
  if (state() == kStopped) return false;
  if (stop_tokens_.contains(token)) return grammar_->accepts_end(state());
  return grammar_->advance(state(), token) != CompiledGrammar::kDead;
}

bool GrammarMatcher::accept(std::int32_t token) {
  if (state() == kStopped) return false;
  if (stop_tokens_.contains(token)) {
    if (!grammar_->accepts_end(state())) return false;
    states_.push_back(kStopped);
    return true;
  }
  const CompiledGrammar::State next = grammar_->advance(state(), token);
  if (next == CompiledGrammar::kDead) return false;
  states_.push_back(next);
  return true;
}

void GrammarMatcher::rollback(std::size_t tokens) { states_.resize(states_.size() - std::min(tokens, num_accepted())); }

bool GrammarMatcher::accepts_end() { return state() == kStopped || grammar_->accepts_end(state()); }

bool GrammarMatcher::must_end() { return state() == kStopped || !grammar_->can_continue(state()); }

}  // namespace kiln::grammar
