// `kiln eval compare`: how faithfully a model (a compressed export) follows its reference (the
// f16 original) on a text: mean KL(reference ‖ model) of the next-token distributions, top-1
// agreement, and both perplexities, over the same sliding windows as `kiln eval ppl`.
#pragma once

#include <cstdint>
#include <span>

#include "eval/perplexity.hpp"
#include "models/language_model.hpp"

namespace kiln::eval {

struct CompareResult {
  std::int64_t num_tokens = 0;
  std::int64_t num_scored = 0;  // positions compared
  std::int64_t num_bytes = 0;
  std::int64_t num_windows = 0;
  double mean_kl = 0.0;         // nats, mean over positions of KL(reference ‖ model)
  double max_kl = 0.0;          // the worst position
  double top1_agreement = 0.0;  // share of positions where both argmaxes agree (first maximum)
  double ppl_model = 0.0;
  double ppl_reference = 0.0;
  double bits_per_byte_model = 0.0;
  double bits_per_byte_reference = 0.0;
  double seconds = 0.0;
};

// Both models must share the vocabulary (the caller checks the tokenizers agree). Throws
// kiln::Error naming the two vocabulary sizes when they differ.
CompareResult compare_models(models::LanguageModel& model, models::LanguageModel& reference,
                             std::span<const std::int32_t> ids, std::int64_t num_bytes, const WindowOptions& options);

}  // namespace kiln::eval
