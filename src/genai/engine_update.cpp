// The engine's sample → update half for plain, n-sample and speculative requests: each running
// sequence with logits from the step samples (or verifies its candidates), appends the tokens,
// streams them and checks its stop conditions.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "genai/candidate_verifier.hpp"
#include "genai/draft_proposer.hpp"
#include "genai/engine.hpp"
#include "genai/speculation_controller.hpp"
#include "grammar/grammar_matcher.hpp"

namespace kiln::genai {
namespace {

// Structured output: row i of the step's logits follows the committed tokens and the first i
// candidates, so each row is masked by the grammar's state there. The candidates are accepted
// only to reach those states and rolled back; verification then commits what it keeps.
void mask_by_grammar(grammar::GrammarMatcher& matcher, Sequence& s, std::int64_t vocab) {
  const auto width = static_cast<std::size_t>(vocab);
  const std::int64_t proposed = s.num_candidates;
  const std::size_t first_row = static_cast<std::size_t>(s.logit_rows - proposed - 1);
  std::size_t accepted = 0;
  for (std::int64_t i = 0; i <= proposed; ++i) {
    matcher.mask_logits(std::span(s.logits).subspan((first_row + static_cast<std::size_t>(i)) * width, width));
    if (i == proposed) break;
    const std::int32_t candidate = s.tokens[s.tokens.size() - static_cast<std::size_t>(proposed - i)];
    if (!matcher.accept(candidate)) break;  // rejected by the grammar, so by verification: later rows do not matter
    ++accepted;
  }
  matcher.rollback(accepted);
}

}  // namespace

std::unique_ptr<TextStream> Engine::make_text_stream(const GenerationConfig& config) const {
  if (tokenizer_ == nullptr) return nullptr;
  return std::make_unique<TextStream>(*tokenizer_, config.stop_strings, config.include_stop_str_in_output,
                                      config.skip_special_tokens);
}

void Engine::update_request(RequestState& r) {
  if (r.scores_prompt()) {
    Sequence& s = *r.sequences.front();
    if (s.num_computed == s.num_committed()) {
      finish_sequence(r, s, GenerationFinishReason::LENGTH);
      finish_request(r);
    }
    return;
  }
  if (r.beam_search) {
    const bool all_ready = std::all_of(r.sequences.begin(), r.sequences.end(),
                                       [](const auto& s) { return !s->running() || s->logit_rows > 0; });
    if (all_ready) update_beams(r);
    return;
  }
  if (r.config.num_return_sequences > 1 && r.sequences.size() == 1 && r.sequences.front()->logit_rows > 0) {
    fork_samples(r);
  }
  for (std::size_t i = 0; i < r.sequences.size(); ++i) {
    Sequence& s = *r.sequences[i];
    if (s.running() && s.logit_rows > 0) update_sequence(r, s);
  }
  const bool all_done =
      std::none_of(r.sequences.begin(), r.sequences.end(), [](const auto& s) { return s->running(); });
  if (all_done) finish_request(r);
}

// n independent samples share the prompt: at the first token the prompt's sequence becomes n,
// sharing its KV blocks (the last partial block is copied on the first write).
void Engine::fork_samples(RequestState& r) {
  const Sequence& parent = *r.sequences.front();
  for (std::int64_t i = 1; i < r.config.num_return_sequences; ++i) {
    auto s = std::make_unique<Sequence>(parent.blocks.fork());
    s->tokens = parent.tokens;
    s->num_computed = parent.num_computed;
    s->admitted = parent.admitted;
    s->block_hashes = parent.block_hashes;
    s->num_cached_blocks = parent.num_cached_blocks;
    s->logits = parent.logits;
    s->logit_rows = parent.logit_rows;
    s->text = make_text_stream(r.config);
    if (parent.grammar) s->grammar = std::make_unique<grammar::GrammarMatcher>(*parent.grammar);
    r.sequences.push_back(std::move(s));
  }
}

void Engine::update_sequence(RequestState& r, Sequence& s) {
  const std::int64_t committed = s.num_committed();
  const std::int64_t proposed = s.num_candidates;
  if (s.grammar) mask_by_grammar(*s.grammar, s, model_.config().vocab_size);
  const VerifiedTokens verified = verify_candidates(
      r.sampler, {s.logits, model_.config().vocab_size, s.tokens, r.num_prompt, proposed, s.candidate_probs},
      r.config.logprobs);
  // Roll back past the first rejected candidate: the cache is valid for the committed tokens and
  // the accepted candidates; the main model's own last token is computed next step.
  s.tokens.resize(static_cast<std::size_t>(committed));
  s.num_candidates = 0;
  s.candidate_probs.clear();
  s.logit_rows = 0;
  s.num_computed = std::min(s.num_computed, committed + verified.num_accepted);
  s.blocks.truncate(s.num_computed);
  if (s.draft) DraftProposer::rollback(*s.draft, committed + verified.num_accepted);
  if (r.controller) {
    if (proposed > 0) {
      r.controller->record_speculative_step(proposed, verified.num_accepted, draft_ms_, step_ms_);
    } else if (s.step_tokens > 1) {
      r.controller->record_prefill(s.step_tokens, step_ms_);  // the prompt (or a chat turn's new tokens)
    } else {
      r.controller->record_plain_step(step_ms_);
    }
  }
  if (proposed > 0) {
    r.speculation.num_proposed += proposed;
    r.speculation.num_accepted += verified.num_accepted;
    ++r.speculation.num_rounds;
  }

  const bool had_tokens = r.timings.first_token_ms != 0;
  std::int64_t appended = 0;
  for (const TokenLogprob& t : verified.tokens) {
    ++appended;
    if (!append_token(r, s, t)) break;
  }
  s.num_computed = std::min<std::int64_t>(s.num_computed, static_cast<std::int64_t>(s.tokens.size()));
  // Time per output token: a step's duration shared by the tokens it produced (measured on the
  // first sequence; the first token is TTFT's).
  if (&s == r.sequences.front().get()) {
    const double now = clock_.elapsed_ms();
    if (had_tokens) {
      for (std::int64_t i = 0; i < appended; ++i) {
        r.timings.token_latencies_ms.push_back((now - r.timings.last_token_ms) / double(appended));
      }
    }
    r.timings.last_token_ms = now;
  }
}

bool Engine::append_token(RequestState& r, Sequence& s, const TokenLogprob& t) {
  if (r.timings.first_token_ms == 0) r.timings.first_token_ms = clock_.elapsed_ms();
  if (s.grammar && !s.grammar->accept(t.token)) {
    // Only when other processors banned every token the grammar allows (all logits -inf).
    spdlog::warn("structured output: token {} is not allowed by the grammar; the output ends before it", t.token);
    finish_sequence(r, s, GenerationFinishReason::STOP);
    return false;
  }
  s.tokens.push_back(t.token);
  s.score += t.logprob;
  if (r.config.logprobs > 0) s.logprobs.push_back(t);
  if (r.config.is_stop_token(t.token)) {
    // The stopping token is recorded but not streamed: it is not part of the text.
    finish_sequence(r, s, GenerationFinishReason::STOP);
    return false;
  }
  StreamingStatus status = StreamingStatus::RUNNING;
  if (r.streams() && r.on_token) status = r.on_token(t.token);
  bool stop_string = false;
  if (s.text) {
    const double start = clock_.elapsed_ms();
    TextStream::Delta delta = s.text->push(t.token);
    r.timings.detokenize_ms += clock_.elapsed_ms() - start;
    stop_string = delta.stopped;
  }
  if (status == StreamingStatus::CANCEL) {
    finish_sequence(r, s, GenerationFinishReason::CANCEL);
  } else if (status == StreamingStatus::STOP || stop_string) {
    finish_sequence(r, s, GenerationFinishReason::STOP);
  } else if (s.grammar && s.grammar->must_end()) {
    finish_sequence(r, s, GenerationFinishReason::STOP);  // the grammar allows nothing more
  } else if (s.num_committed() - r.num_prompt >= r.max_new_tokens) {
    finish_sequence(r, s, GenerationFinishReason::LENGTH);
  }
  return s.running();
}

void Engine::finish_sequence(RequestState& r, Sequence& s, GenerationFinishReason reason) {
  s.finish_reason = reason;
  if (s.text && reason != GenerationFinishReason::CANCEL) {
    const double start = clock_.elapsed_ms();
    s.text->finish();  // the held-back tail was no stop string after all: it joins the text
    r.timings.detokenize_ms += clock_.elapsed_ms() - start;
  }
  s.logits.clear();
  s.logits.shrink_to_fit();
  if (prefix_caching_) cache_computed_blocks(s);  // with the candidates the last step accepted
  s.blocks.clear();
  if (s.draft && draft_prefix_caching_) cache_draft_blocks(s);  // for a later request (a chat's next turn)
  s.draft.reset();
}

void Engine::finish_request(RequestState& r) {
  if (r.beam_search) finish_beams(r);
  r.finish_reason = r.sequences.front()->finish_reason;
  r.timings.finished_ms = clock_.elapsed_ms();
}

}  // namespace kiln::genai
