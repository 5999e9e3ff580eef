// What every runnable model offers the generation layer: one forward step over a ragged batch
// against the paged KV cache. The reference model (llama.cpp over ReferenceOps) and the
// compiled CPU model implement it alike, so everything above runs on either.
#pragma once

#include <span>

#include "ir/model_config.hpp"
#include "models/kv_layout.hpp"
#include "models/step.hpp"

namespace kiln::models {

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;

  virtual const ir::ModelConfig& config() const = 0;
  virtual const KvCacheLayout& kv_cache_layout() const = 0;

  // Processes every chunk's new tokens: stores their keys and values in the chunk's blocks and
  // writes the requested logits to `out` (resized as needed). Chunks must use disjoint blocks
  // for the positions they write.
  virtual void step(std::span<const SequenceChunk> batch, StepOutput& out) = 0;

  // Copies whole KV blocks, in order (Ops::copy_kv_blocks): copy-on-write for forked sequences.
  virtual void copy_blocks(std::span<const KvBlockCopy> copies) = 0;
};

}  // namespace kiln::models
