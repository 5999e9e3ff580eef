// Speculative decoding's draft side: a smaller model with the same tokenizer proposes the next
// tokens of several sequences at once. Each sequence keeps its own KV cache in the draft
// model (DraftState), which lags behind the committed tokens while the draft is idle: catch_up
// computes a chunk of them beside a plain step (the SpeculationController decides how much),
// and a proposal first computes whatever is still missing, then runs one draft step per
// candidate, all sequences in one ragged batch. The draft samples with the request's own processors and
// warpers, and for sampled requests records its distribution q at each candidate for the
// verifier's rejection sampling.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "genai/request_state.hpp"
#include "kv/block_pool.hpp"
#include "models/language_model.hpp"

namespace kiln::genai {

class DraftState {
 public:
  DraftState(kv::BlockPool& pool, std::int32_t block_size, const GenerationConfig& config);

  kv::BlockTable blocks;
  std::int64_t num_computed = 0;  // tokens of the sequence the draft's cache holds
  Sampler sampler;                // the draft's own random stream
};

class DraftProposer {
 public:
  // `main_vocab_size`: candidates at or above it are never proposed (the main model's
  // embedding has no row for them).
  DraftProposer(models::LanguageModel& draft, std::int64_t main_vocab_size);

  std::unique_ptr<DraftState> make_state(const GenerationConfig& config);

  struct Slot {
    Sequence* sequence = nullptr;
    const RequestState* request = nullptr;
    std::int64_t max_candidates = 0;
  };
  // Appends up to each slot's max_candidates tokens to its sequence (num_candidates, and
  // candidate_probs for sampled requests). Stops early for a slot at an EOS or stop token, below
  // the request's assistant_confidence_threshold, or when the draft's KV cache is full.
  void propose(std::span<Slot> slots);

  // Computes the next `num_tokens` committed tokens of each sequence the draft has not seen
  // (no logits), as far as its KV cache allows; returns the tokens computed.
  struct CatchUp {
    Sequence* sequence = nullptr;
    std::int64_t num_tokens = 0;
  };
  std::int64_t catch_up(std::span<const CatchUp> work);

  // The draft's multiply-adds per token over the main model's (the controller's cost prior).
  double cost_ratio(const ir::ModelConfig& main) const;

  // After verification: the draft's cache holds valid keys and values for `num_valid` tokens.
  static void rollback(DraftState& state, std::int64_t num_valid);

  const models::LanguageModel& model() const { return model_; }

 private:
  // Picks the slot's next candidate from the draft's logits row; false ends its proposal.
  bool take_candidate(Slot& slot, std::span<float> row);

  models::LanguageModel& model_;
  kv::BlockPool pool_;
  std::int64_t main_vocab_size_;
  std::vector<models::SequenceChunk> batch_;
  std::vector<std::size_t> batch_slots_;
  models::StepOutput output_;
  std::vector<float> q_;  // [draft vocab] scratch
};

}  // namespace kiln::genai
