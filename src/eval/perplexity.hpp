// `kiln eval ppl`: sliding-window perplexity and bits per byte of a text, exactly as
// transformers' "perplexity of fixed-length models" (tools/tinylm/perplexity.py's METHOD): the
// same windows, each target scored once, nll summed in double.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kiln/tokenizer.hpp"
#include "models/language_model.hpp"

namespace kiln::eval {

struct WindowOptions {
  std::int64_t context = 1024;          // tokens per window
  std::int64_t stride = 512;            // tokens between window starts
  std::int64_t max_chunk_tokens = 512;  // tokens per forward step inside a window (memory bound)
};

struct PerplexityResult {
  std::int64_t num_tokens = 0;  // the text's ids, with the tokenizer's special tokens
  std::int64_t num_scored = 0;  // num_tokens - 1 (stride == context: minus one per later window)
  std::int64_t num_bytes = 0;   // UTF-8 bytes of the text
  std::int64_t num_windows = 0;
  double nll_nats = 0.0;       // Σ -ln p(target)
  double ppl = 0.0;            // exp(nll / num_scored)
  double bits_per_byte = 0.0;  // nll / ln 2 / num_bytes
  double seconds = 0.0;        // wall time of the forward passes
};

// The text's ids as transformers' tokenizer(text) gives them (special tokens added).
std::vector<std::int32_t> encode_eval_text(const Tokenizer& tokenizer, std::string_view text);

PerplexityResult evaluate_perplexity(models::LanguageModel& model, std::span<const std::int32_t> ids,
                                     std::int64_t num_bytes, const WindowOptions& options);

PerplexityResult evaluate_perplexity(models::LanguageModel& model, const Tokenizer& tokenizer, std::string_view text,
                                     const WindowOptions& options);

// -ln p(target) under one row of logits [vocab].
double token_nll(std::span<const float> logits, std::int32_t target);

}  // namespace kiln::eval
