#include "genai/beam_search.hpp"

#include <algorithm>
#include <cmath>

#include "genai/logprobs.hpp"
#include "runtime/host_math.hpp"

namespace kiln::genai {
namespace {

struct Scored {
  double score;
  std::size_t beam;
  std::int32_t token;
};

// HF's candidate order: higher score first; torch.topk over the flattened [beams · vocab] scores
// breaks exact ties towards the lower flat index.
bool ranks_before(const Scored& a, const Scored& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.beam != b.beam ? a.beam < b.beam : a.token < b.token;
}

}  // namespace

BeamSearch::BeamSearch(const GenerationConfig& config, std::int64_t num_prompt, std::int64_t max_new_tokens,
                       std::function<bool(std::span<const std::int32_t>)> ends_with_stop_string)
    : config_(config),
      num_prompt_(num_prompt),
      max_new_tokens_(max_new_tokens),
      ends_with_stop_string_(std::move(ends_with_stop_string)),
      num_beams_(config.num_beams) {
  const auto num_stop_tokens =
      static_cast<std::int64_t>((config.ignore_eos ? 0 : config.eos_token_ids.size()) + config.stop_token_ids.size());
  num_kept_ = std::max<std::int64_t>(2, 1 + num_stop_tokens) * num_beams_;
}

double BeamSearch::normalise(double score, std::int64_t generated_length) const {
  return score / std::pow(static_cast<double>(generated_length), config_.length_penalty);
}

bool BeamSearch::ends(std::span<const std::int32_t> tokens, std::int32_t token, std::int64_t generated_length) const {
  if (config_.is_stop_token(token) || generated_length >= max_new_tokens_) return true;
  if (!ends_with_stop_string_) return false;
  std::vector<std::int32_t> generated(tokens.begin() + num_prompt_, tokens.end());
  generated.push_back(token);
  return ends_with_stop_string_(generated);
}

void BeamSearch::add_finished(BeamHypothesis hypothesis) {
  // After the existing ones on equal scores, as torch.topk over [finished, new] keeps them.
  const auto at = std::find_if(finished_.begin(), finished_.end(),
                               [&](const BeamHypothesis& h) { return h.score < hypothesis.score; });
  finished_.insert(at, std::move(hypothesis));
  if (static_cast<std::int64_t>(finished_.size()) > num_beams_) finished_.pop_back();
}

void BeamSearch::update_early_stop(double best_running_score, std::int64_t generated_length) {
  // Only once every slot holds a finished hypothesis can the running beams be ruled out.
  if (static_cast<std::int64_t>(finished_.size()) < num_beams_) return;
  const bool assume_longest = config_.early_stopping == StopCriteria::NEVER && config_.length_penalty > 0.0;
  const double best_possible = normalise(best_running_score, assume_longest ? max_new_tokens_ : generated_length);
  improvement_possible_ = improvement_possible_ && best_possible > finished_.back().score;
}

std::vector<BeamSearch::Continuation> BeamSearch::step(std::span<Beam> beams) {
  const std::int64_t generated_length = static_cast<std::int64_t>(beams.front().tokens.size()) - num_prompt_ + 1;
  // The global top K is among each beam's own top K: keep only those (beams · K, not beams · vocab).
  std::vector<Scored> scored, row;
  for (std::size_t b = 0; b < beams.size(); ++b) {
    std::span<float> logits = beams[b].logits;
    const double norm = runtime::log_sum_exp(logits);
    for (float& l : logits) l = static_cast<float>(l - norm);  // log-softmax, then the processors (HF's order)
    apply_logits_processors(logits, {beams[b].tokens, num_prompt_}, config_);
    row.clear();
    for (std::size_t t = 0; t < logits.size(); ++t)
      row.push_back({beams[b].score + logits[t], b, static_cast<std::int32_t>(t)});
    const auto top =
        static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(num_kept_), row.size()));
    std::partial_sort(row.begin(), row.begin() + top, row.end(), ranks_before);
    scored.insert(scored.end(), row.begin(), row.begin() + top);
  }
  const auto kept =
      static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(num_kept_), scored.size()));
  std::partial_sort(scored.begin(), scored.begin() + kept, scored.end(), ranks_before);

  const bool full = static_cast<std::int64_t>(finished_.size()) == num_beams_;
  const bool may_finish = improvement_possible_ && !(full && config_.early_stopping == StopCriteria::EARLY);
  std::vector<Continuation> running;
  bool all_ended = true;
  for (std::ptrdiff_t j = 0; j < kept; ++j) {
    const Scored& c = scored[static_cast<std::size_t>(j)];
    const Beam& parent = beams[c.beam];
    TokenLogprob logprob = token_logprob(parent.logits, c.token, config_.logprobs);
    if (ends(parent.tokens, c.token, generated_length)) {
      // Only the first num_beams continuations may become hypotheses; the rest are spares.
      if (may_finish && j < num_beams_) {
        BeamHypothesis h{{parent.tokens.begin() + num_prompt_, parent.tokens.end()},
                         {parent.logprobs.begin(), parent.logprobs.end()},
                         normalise(c.score, generated_length)};
        h.generated.push_back(c.token);
        h.logprobs.push_back(std::move(logprob));
        add_finished(std::move(h));
      }
      continue;
    }
    all_ended = false;
    if (static_cast<std::int64_t>(running.size()) < num_beams_) {
      running.push_back({c.beam, c.token, c.score, std::move(logprob)});
    }
  }
  if (!running.empty()) update_early_stop(running.front().score, generated_length);
  const bool finished_early =
      config_.early_stopping == StopCriteria::EARLY && static_cast<std::int64_t>(finished_.size()) == num_beams_;
  done_ = all_ended || !improvement_possible_ || finished_early;
  if (done_) running.clear();
  return running;
}

std::vector<BeamHypothesis> BeamSearch::results(std::int64_t count, std::vector<BeamHypothesis> unfinished) const {
  std::vector<BeamHypothesis> out = finished_;
  for (BeamHypothesis& h : unfinished) {
    h.score = normalise(h.score, std::max<std::int64_t>(1, static_cast<std::int64_t>(h.generated.size())));
    out.push_back(std::move(h));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
  if (static_cast<std::int64_t>(out.size()) > count) out.resize(static_cast<std::size_t>(count));
  return out;
}

}  // namespace kiln::genai
