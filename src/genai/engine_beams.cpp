// The engine's update for beam search: hands the beams' logits to BeamSearch, then makes its
// choice real — a beam chosen once continues in place, a beam chosen again is forked (sharing
// its KV blocks; the scheduler copies a shared partial block before it is written), a beam not
// chosen is freed.
#include <algorithm>

#include "genai/beam_search.hpp"
#include "genai/engine.hpp"

namespace kiln::genai {

void Engine::update_beams(RequestState& r) {
  const auto vocab = static_cast<std::size_t>(model_.config().vocab_size);
  std::vector<BeamSearch::Beam> beams;
  for (auto& s : r.sequences) {
    beams.push_back({std::span(s->logits).first(vocab), s->tokens, s->score, s->logprobs});
  }
  const std::vector<BeamSearch::Continuation> next = r.beam_search->step(beams);
  if (r.timings.first_token_ms == 0) r.timings.first_token_ms = clock_.elapsed_ms();
  if (r.beam_search->done()) {
    for (auto& s : r.sequences) s->finish_reason = GenerationFinishReason::STOP;
    finish_request(r);
    return;
  }
  std::vector<std::int64_t> uses(r.sequences.size(), 0);
  for (const auto& c : next) ++uses[c.parent];
  std::vector<std::unique_ptr<Sequence>> running;
  for (const auto& c : next) {
    std::unique_ptr<Sequence>& parent = r.sequences[c.parent];
    std::unique_ptr<Sequence> beam;
    if (--uses[c.parent] == 0) {
      beam = std::move(parent);  // its last use: continue in place
    } else {
      beam = std::make_unique<Sequence>(parent->blocks.fork());
      beam->tokens = parent->tokens;
      beam->num_computed = parent->num_computed;
      beam->admitted = parent->admitted;
      beam->block_hashes = parent->block_hashes;
      beam->num_cached_blocks = parent->num_cached_blocks;
      beam->logprobs = parent->logprobs;
    }
    beam->tokens.push_back(c.token);
    beam->score = c.score;
    if (r.config.logprobs > 0) beam->logprobs.push_back(c.logprob);
    beam->logit_rows = 0;
    running.push_back(std::move(beam));
  }
  r.sequences = std::move(running);  // beams not chosen are freed here, and their blocks with them
}

void Engine::finish_beams(RequestState& r) {
  // Beams still running when the search is cut short (abort) compete with the finished ones.
  std::vector<BeamHypothesis> unfinished;
  const auto count = static_cast<std::int64_t>(r.config.num_return_sequences);
  if (!r.beam_search->done()) {
    for (const auto& s : r.sequences) {
      unfinished.push_back({{s->tokens.begin() + r.num_prompt, s->tokens.end()}, s->logprobs, s->score});
    }
  }
  const GenerationFinishReason cut_short = r.sequences.front()->finish_reason;
  const std::vector<std::int32_t> prompt(r.sequences.front()->tokens.begin(),
                                         r.sequences.front()->tokens.begin() + r.num_prompt);
  r.sequences.clear();
  const auto block_size = static_cast<std::int32_t>(model_.kv_cache_layout().block_size);
  for (BeamHypothesis& h : r.beam_search->results(count, std::move(unfinished))) {
    auto s = std::make_unique<Sequence>(kv::BlockTable(pool_, block_size));
    s->tokens = prompt;
    s->tokens.insert(s->tokens.end(), h.generated.begin(), h.generated.end());
    s->num_computed = 0;
    s->score = h.score;
    s->logprobs = std::move(h.logprobs);
    const std::int32_t last = h.generated.empty() ? -1 : h.generated.back();
    const bool stopped = r.config.is_stop_token(last);
    s->finish_reason =
        r.beam_search->done() ? (stopped ? GenerationFinishReason::STOP : GenerationFinishReason::LENGTH) : cut_short;
    if ((s->text = make_text_stream(r.config))) {
      // The text: every generated token but a final stop token, cut at a stop string.
      const std::size_t text_tokens = h.generated.size() - (stopped ? 1 : 0);
      for (std::size_t i = 0; i < text_tokens; ++i) {
        if (s->text->push(h.generated[i]).stopped) break;
      }
      s->text->finish();
    }
    r.sequences.push_back(std::move(s));
  }
}

}  // namespace kiln::genai
