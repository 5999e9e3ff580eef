// What the engine knows about one request: its sequences (one; or several for beam search and
// for n independent samples), how it decodes, its callbacks and timings. Invariant between
// steps: a running sequence holds every committed token in `tokens`, of which the first
// `num_computed` have keys and values in its blocks; speculative candidates exist only inside
// a step (appended before scheduling, verified and removed after it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "genai/sampler.hpp"
#include "genai/text_stream.hpp"
#include "kiln/decoded_results.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/streamer.hpp"
#include "kv/block_table.hpp"

namespace kiln::grammar {
class GrammarMatcher;  // grammar/grammar_matcher.hpp
}

namespace kiln::genai {

using RequestId = std::int64_t;

// Called with every generated token (stop tokens excluded); its answer may end the request.
using TokenCallback = std::function<StreamingStatus(std::int32_t token)>;
// A scoring request's logits, step by step: rows [n, vocab] where row i is the next-token
// distribution after prompt position first_position + i. The rows are valid during the call.
using PromptLogitsCallback = std::function<void(std::int64_t first_position, std::span<const float> rows)>;

class DraftState;             // genai/draft_proposer.hpp
class BeamSearch;             // genai/beam_search.hpp
class SpeculationController;  // genai/speculation_controller.hpp

struct Sequence {
  explicit Sequence(kv::BlockTable table);
  ~Sequence();
  Sequence(Sequence&&) noexcept;

  std::vector<std::int32_t> tokens;  // prompt, then generated tokens (then, within a step, candidates)
  std::int64_t num_computed = 0;     // tokens whose keys and values are cached
  std::int64_t step_tokens = 0;      // tokens the last step computed for it
  bool admitted = false;             // scheduled since it (re)started; preemption clears it
  kv::BlockTable blocks;
  // Prefix caching: the hash chain of the sequence's leading full blocks (by content, so it
  // outlives preemption), and how many of its blocks are in the cache (found there or put there).
  std::vector<std::uint64_t> block_hashes;
  std::size_t num_cached_blocks = 0;
  GenerationFinishReason finish_reason = GenerationFinishReason::NONE;
  double score = 0;                    // summed log-probabilities of the generated tokens (beam search: its own score)
  std::vector<TokenLogprob> logprobs;  // when GenerationConfig::logprobs > 0
  std::unique_ptr<TextStream> text;    // when the engine has a tokenizer and the request streams text
  // Structured output: where the generated tokens stand in the request's grammar.
  std::unique_ptr<grammar::GrammarMatcher> grammar;

  // Speculative decoding within a step.
  std::int64_t num_candidates = 0;     // trailing entries of `tokens` not yet verified
  std::vector<float> candidate_probs;  // [num_candidates, vocab] the draft's distributions (sampling only)
  std::unique_ptr<DraftState> draft;   // the draft model's KV cache for this sequence

  // The logits of the last step, waiting for the request's update: [logit_rows, vocab].
  std::vector<float> logits;
  std::int64_t logit_rows = 0;

  bool running() const { return finish_reason == GenerationFinishReason::NONE; }
  std::int64_t num_committed() const { return static_cast<std::int64_t>(tokens.size()) - num_candidates; }
};

struct RequestTimings {
  double queued_ms = 0;                // engine clock when the request was added
  std::optional<double> scheduled_ms;  // engine clock when a step first scheduled it
  double first_token_ms = 0;           // engine clock when its first token was sampled (0: none yet)
  double finished_ms = 0;
  double detokenize_ms = 0;  // time spent turning tokens into text
  // Per generated token after the first: the time since the previous one.
  std::vector<double> token_latencies_ms;
  double last_token_ms = 0;
};

struct SpeculationStats {
  std::int64_t num_proposed = 0;  // candidates the draft or the prompt lookup offered
  std::int64_t num_accepted = 0;  // candidates the main model confirmed
  std::int64_t num_rounds = 0;    // steps that verified at least one candidate
  // The draft model's share of the prompt: positions whose keys and values it found in its
  // prefix cache (a chat's previous turns), and positions it computed itself.
  std::int64_t num_draft_reused = 0;
  std::int64_t num_draft_prefilled = 0;
};

struct RequestState {
  explicit RequestState(const GenerationConfig& generation_config);
  ~RequestState();

  GenerationConfig config;
  Sampler sampler;
  std::int64_t num_prompt = 0;
  std::int64_t num_reused = 0;                       // prompt tokens whose KV came from the prefix cache
  std::int64_t max_new_tokens = 0;                   // resolved from the config and the context
  std::vector<std::unique_ptr<Sequence>> sequences;  // beam search: the running beams, then the results
  TokenCallback on_token;
  // Scoring (RequestOptions::on_prompt_logits): the prompt is computed, its logits from this
  // position on are reported, and the request ends without generating.
  PromptLogitsCallback on_prompt_logits;
  std::int64_t prompt_logits_from = 0;
  GenerationFinishReason finish_reason = GenerationFinishReason::NONE;
  RequestTimings timings;
  SpeculationStats speculation;
  bool speculative = false;  // a draft model or prompt lookup proposes candidates
  std::unique_ptr<SpeculationController> controller;
  std::unique_ptr<BeamSearch> beam_search;

  // The first (best) sequence: what a single-sequence caller reads.
  const Sequence& first() const { return *sequences.front(); }
  std::int64_t num_generated() const { return first().num_committed() - num_prompt; }
  std::span<const std::int32_t> generated() const {
    return std::span(first().tokens)
        .subspan(static_cast<std::size_t>(num_prompt), static_cast<std::size_t>(num_generated()));
  }
  std::int64_t num_generated_total() const;  // over every sequence
  bool streams() const { return sequences.size() == 1 && !beam_search; }
  bool scores_prompt() const { return static_cast<bool>(on_prompt_logits); }
};

}  // namespace kiln::genai
