// Helpers for the runtime tests: compiling a source for CPU or REFERENCE, one full forward,
// greedy decoding, logits comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <vector>

#include "../models/golden_checkpoint.hpp"
#include "ir/hf_checkpoint.hpp"
#include "models/model_factory.hpp"
#include "rounded_reference_ops.hpp"
#include "runtime/core.hpp"
#include "runtime/cpu/paged_kv_store.hpp"

namespace kiln::runtime::testing {

inline CompiledModel compile_cpu(std::shared_ptr<const ir::HfCheckpoint> checkpoint, DeviceProperties properties,
                                 std::int64_t context = 256) {
  return Core().compile_model(checkpoint->config(), checkpoint, kCpuDevice, properties,
                              {.context_tokens = context, .max_sequences = 2, .block_size = 4});
}

inline CompiledModel compile_reference(std::shared_ptr<const ir::HfCheckpoint> checkpoint, std::int64_t context = 256) {
  return Core().compile_model(checkpoint->config(), checkpoint, kReferenceDevice,
                              {.kv_cache_precision = ElementType::kF32},
                              {.context_tokens = context, .max_sequences = 2, .block_size = 4});
}

// The reference forward with the compiled backend's deliberate roundings (RoundedReferenceOps):
// K/V through `precision`, activations of bf16 weights through bf16, and with
// `act_group_size` > 0 the inputs of int4/int8 weights through int8 codes per group.
inline std::unique_ptr<models::LanguageModel> rounded_reference(const ir::ModelConfig& config,
                                                                std::shared_ptr<const ir::TensorSource> weights,
                                                                ElementType precision, std::size_t act_group_size = 0,
                                                                std::int64_t context = 256) {
  const KvCacheRequest request{.context_tokens = context, .max_sequences = 2, .block_size = 4};
  return models::create_language_model(config, std::move(weights),
                                       std::make_unique<RoundedReferenceOps>(precision, act_group_size),
                                       kv_cache_layout(config, request, precision, 32));
}

inline std::vector<std::int32_t> all_blocks(const models::LanguageModel& model) {
  std::vector<std::int32_t> blocks(static_cast<std::size_t>(model.kv_cache_layout().num_blocks));
  std::iota(blocks.begin(), blocks.end(), 0);
  return blocks;
}

// Logits [ids, vocab] of one forward over the whole prompt.
inline std::vector<float> full_forward(models::LanguageModel& model, std::span<const std::int32_t> ids) {
  const std::vector<std::int32_t> blocks = all_blocks(model);
  const models::SequenceChunk chunk{ids, 0, blocks, models::LogitsMode::kAll};
  models::StepOutput out;
  model.step({&chunk, 1}, out);
  return out.logits;
}

inline std::int32_t argmax(std::span<const float> row) {
  return static_cast<std::int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

// `count` greedy tokens after the prompt: one prefill step, then one step per token.
inline std::vector<std::int32_t> greedy(models::LanguageModel& model, std::span<const std::int32_t> prompt,
                                        std::size_t count) {
  const std::vector<std::int32_t> blocks = all_blocks(model);
  std::vector<std::int32_t> tokens(prompt.begin(), prompt.end());
  models::SequenceChunk chunk{tokens, 0, blocks, models::LogitsMode::kLast};
  models::StepOutput out;
  model.step({&chunk, 1}, out);
  std::vector<std::int32_t> generated;
  while (generated.size() < count) {
    generated.push_back(argmax(out.row(0)));
    tokens.push_back(generated.back());
    chunk = {std::span<const std::int32_t>(tokens).last(1), static_cast<std::int64_t>(tokens.size()) - 1, blocks,
             models::LogitsMode::kLast};
    model.step({&chunk, 1}, out);
  }
  return generated;
}

inline bool bf16_weights(const kiln::testing::GoldenCheckpoint& g) {
  return g.checkpoint->find("model.embed_tokens.weight")->dtype == ElementType::kBf16;
}

// The max |Δlogit| a backend may differ from the rounded reference by on a golden checkpoint with
// a `kv` cache (compiled_model_test.cpp says how these were measured).
inline float golden_tolerance(const kiln::testing::GoldenCheckpoint& g, ElementType kv) {
  if (bf16_weights(g)) return 0.1f;
  switch (kv) {
    case ElementType::kF32: return 1e-4f;
    case ElementType::kF16: return g.dir.filename() == "phi3_tiny" ? 1e-2f : 3e-3f;
    case ElementType::kBf16: return 1e-2f;
    case ElementType::kU8: return 1e-2f;
    default: break;
  }
  return 0;
}

inline float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return INFINITY;
  float m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Chunked prefill, decode and a ragged batch of two sequences give the logits of one full
// forward over `ids` (an identity of causal attention over the paged cache). The model's cache
// holds at least 32 blocks of 4 tokens.
inline void expect_chunks_and_batches_agree(models::LanguageModel& model, const std::vector<std::int32_t>& ids) {
  const std::int64_t vocab = model.config().vocab_size;
  const std::vector<float> full = full_forward(model, ids);
  std::vector<std::int32_t> blocks_a(16), blocks_b(16);
  std::iota(blocks_a.begin(), blocks_a.end(), 0);
  std::iota(blocks_b.begin(), blocks_b.end(), 16);
  const std::size_t split = ids.size() / 2;
  const std::span<const std::int32_t> all(ids);
  // Step 1: sequence A's first half and all of B; step 2: A's second half.
  const models::SequenceChunk first[] = {{all.first(split), 0, blocks_a, models::LogitsMode::kAll},
                                         {all, 0, blocks_b, models::LogitsMode::kAll}};
  models::StepOutput out;
  model.step(first, out);
  ASSERT_EQ(out.num_rows, static_cast<std::int64_t>(split + ids.size()));
  const std::vector<float> first_rows(out.logits.begin(), out.logits.begin() + split * vocab);
  const std::vector<float> b_rows(out.logits.begin() + split * vocab, out.logits.end());
  EXPECT_LT(max_abs_diff(b_rows, full), 1e-5f);
  EXPECT_LT(max_abs_diff(first_rows, std::vector<float>(full.begin(), full.begin() + split * vocab)), 1e-5f);
  const models::SequenceChunk second{all.subspan(split), static_cast<std::int64_t>(split), blocks_a,
                                     models::LogitsMode::kAll};
  model.step({&second, 1}, out);
  EXPECT_LT(max_abs_diff(out.logits, std::vector<float>(full.begin() + split * vocab, full.end())), 1e-5f);
}

}  // namespace kiln::runtime::testing
