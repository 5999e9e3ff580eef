// The unit of work of every forward pass: a ragged batch of sequences, each contributing the
// tokens it has not yet processed. Prefill chunks and decode tokens ride in the same batch; a
// sequence's KV cache is addressed through its block table.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kiln::models {

// Which logits a sequence wants back from a step.
enum class LogitsMode : std::uint8_t {
  kNone,  // a prefill chunk that is not the last: only fill the KV cache
  kLast,  // next-token distribution after the chunk (generation)
  kAll,   // one row per new token (perplexity, speculative verification)
};

struct SequenceChunk {
  std::span<const std::int32_t> tokens;  // the new tokens, at positions num_cached, num_cached+1, ...
  std::int64_t num_cached = 0;           // tokens of this sequence already in the KV cache
  // KV block ids covering positions [0, num_cached + tokens.size()); position p lives in block
  // block_table[p / block_size] at offset p % block_size.
  std::span<const std::int32_t> block_table;
  LogitsMode logits = LogitsMode::kLast;
};

// Logits of one step: rows in batch order (for each sequence 0, 1 or tokens.size() rows).
struct StepOutput {
  std::vector<float> logits;  // [num_rows, vocab_size]
  std::int64_t num_rows = 0;
  std::int64_t vocab_size = 0;

  std::span<const float> row(std::int64_t r) const {
    return {logits.data() + r * vocab_size, static_cast<std::size_t>(vocab_size)};
  }
};

// Rows a sequence contributes to StepOutput.
inline std::int64_t logits_rows(const SequenceChunk& chunk) {
  switch (chunk.logits) {
    case LogitsMode::kNone: return 0;
    case LogitsMode::kLast: return chunk.tokens.empty() ? 0 : 1;
    case LogitsMode::kAll: return static_cast<std::int64_t>(chunk.tokens.size());
  }
  return 0;
}

}  // namespace kiln::models
