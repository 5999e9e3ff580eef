#include "genai/draft_proposer.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/host_math.hpp"

namespace kiln::genai {
namespace {

// The draft draws from its own stream, independent of the main sampler's.
GenerationConfig draft_sampling_config(GenerationConfig config) {
  config.rng_seed ^= 0x9E3779B97F4A7C15ull;
  return config;
}

// Multiply-adds per token of a decoder's projections and LM head (attention over the context
// is left out: it is small for the short contexts speculation runs on).
double macs_per_token(const ir::ModelConfig& c) {
  const double h = double(c.hidden_size);
  const double layer = h * double(c.q_dim()) * 2 + h * double(c.kv_dim()) * 2 + 3 * h * double(c.intermediate_size);
  return double(c.num_layers) * layer + h * double(c.vocab_size);
}

}  // namespace

DraftState::DraftState(kv::BlockPool& pool, std::int32_t block_size, const GenerationConfig& config)
    : blocks(pool, block_size), sampler(draft_sampling_config(config)) {}

DraftProposer::DraftProposer(models::LanguageModel& draft, std::int64_t main_vocab_size)
    : model_(draft),
      pool_(static_cast<std::int32_t>(draft.kv_cache_layout().num_blocks)),
      main_vocab_size_(main_vocab_size) {}

std::unique_ptr<DraftState> DraftProposer::make_state(const GenerationConfig& config) {
  return std::make_unique<DraftState>(pool_, static_cast<std::int32_t>(model_.kv_cache_layout().block_size), config);
}

void DraftProposer::rollback(DraftState& state, std::int64_t num_valid) {
  state.num_computed = std::min(state.num_computed, num_valid);
  state.blocks.truncate(state.num_computed);
}

double DraftProposer::cost_ratio(const ir::ModelConfig& main) const {
  return macs_per_token(model_.config()) / macs_per_token(main);
}

std::int64_t DraftProposer::catch_up(std::span<const CatchUp> work) {
  batch_.clear();
  std::vector<DraftState*> states;
  const std::int64_t draft_context =
      std::min(model_.config().max_position_embeddings, model_.kv_cache_layout().num_tokens());
  for (const CatchUp& w : work) {
    DraftState& d = *w.sequence->draft;
    const auto length = static_cast<std::int64_t>(w.sequence->tokens.size());
    // The last committed token stays for the proposal (its logits give the first candidate).
    const std::int64_t end = std::min({d.num_computed + w.num_tokens, length - 1, draft_context});
    if (end <= d.num_computed || !d.blocks.reserve(end)) continue;
    batch_.push_back(
        {std::span(w.sequence->tokens)
             .subspan(static_cast<std::size_t>(d.num_computed), static_cast<std::size_t>(end - d.num_computed)),
         d.num_computed, d.blocks.blocks(), models::LogitsMode::kNone});
    states.push_back(&d);
  }
  if (batch_.empty()) return 0;
  model_.step(batch_, output_);
  std::int64_t computed = 0;
  for (std::size_t i = 0; i < states.size(); ++i) {
    const auto n = static_cast<std::int64_t>(batch_[i].tokens.size());
    states[i]->num_computed += n;
    computed += n;
  }
  return computed;
}

void DraftProposer::propose(std::span<Slot> slots) {
  std::vector<bool> active(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) active[i] = slots[i].max_candidates > 0;
  const std::int64_t draft_context =
      std::min(model_.config().max_position_embeddings, model_.kv_cache_layout().num_tokens());
  while (true) {
    batch_.clear();
    batch_slots_.clear();
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (!active[i]) continue;
      Sequence& s = *slots[i].sequence;
      DraftState& d = *s.draft;
      const auto length = static_cast<std::int64_t>(s.tokens.size());
      if (length >= draft_context || !d.blocks.reserve(length)) {
        active[i] = false;  // the draft has no room: verify what it proposed so far
        continue;
      }
      batch_.push_back({std::span(s.tokens).subspan(static_cast<std::size_t>(d.num_computed)), d.num_computed,
                        d.blocks.blocks(), models::LogitsMode::kLast});
      batch_slots_.push_back(i);
    }
    if (batch_.empty()) return;
    model_.step(batch_, output_);
    for (std::size_t b = 0; b < batch_slots_.size(); ++b) {
      Slot& slot = slots[batch_slots_[b]];
      slot.sequence->draft->num_computed = static_cast<std::int64_t>(slot.sequence->tokens.size());
      std::span<float> row(output_.logits.data() + static_cast<std::int64_t>(b) * output_.vocab_size,
                           static_cast<std::size_t>(output_.vocab_size));
      active[batch_slots_[b]] = take_candidate(slot, row);
    }
  }
}

bool DraftProposer::take_candidate(Slot& slot, std::span<float> row) {
  Sequence& s = *slot.sequence;
  const RequestState& r = *slot.request;
  Sampler& sampler = s.draft->sampler;
  const TokenHistory history{s.tokens, r.num_prompt};
  std::int32_t token = 0;
  double confidence = 1.0;
  if (sampler.is_greedy()) {
    token = sampler.sample(row, history);  // processors applied in place, then argmax
    if (r.config.assistant_confidence_threshold > 0) confidence = std::exp(row[token] - runtime::log_sum_exp(row));
  } else {
    sampler.distribution(row, history, q_);
    token = sampler.draw(q_);
    confidence = q_[static_cast<std::size_t>(token)];
  }
  if (token < 0 || token >= main_vocab_size_) return false;
  if (r.config.assistant_confidence_threshold > 0 && confidence < r.config.assistant_confidence_threshold) return false;
  s.tokens.push_back(token);
  ++s.num_candidates;
  if (!sampler.is_greedy()) {
    // q over the main model's vocabulary: zero where the draft has no token.
    const auto vocab = static_cast<std::size_t>(main_vocab_size_);
    const std::size_t offset = s.candidate_probs.size();
    s.candidate_probs.resize(offset + vocab, 0.0f);
    std::copy_n(q_.begin(), std::min(vocab, q_.size()),
                s.candidate_probs.begin() + static_cast<std::ptrdiff_t>(offset));
  }
  return !r.config.is_stop_token(token) && s.num_candidates < slot.max_candidates;
}

}  // namespace kiln::genai
