// Models for the generation tests: the golden checkpoints (tests/data/checkpoints, with
// transformers' outputs) and the draft made for llama3_tiny (tests/data/genai/llama3_tiny_draft,
// tools/make_generation_golden.py), loaded on the reference backend with a KV cache sized by
// the test.
#pragma once

#include <filesystem>
#include <memory>

#include "ir/hf_checkpoint.hpp"
#include "kiln/generation_config.hpp"
#include "kiln/tokenizer.hpp"
#include "models/model_factory.hpp"
#include "runtime/reference/reference_ops.hpp"
#include "support/test_support.hpp"

namespace kiln::testing {

inline std::filesystem::path checkpoint_dir(const std::string& name) { return test_data_dir() / "checkpoints" / name; }
inline std::filesystem::path draft_dir() { return test_data_dir() / "genai" / "llama3_tiny_draft"; }

struct TestModel {
  std::shared_ptr<ir::HfCheckpoint> checkpoint;
  std::unique_ptr<models::LanguageModel> model;
};

// Greedy, exactly n new tokens, the prompt taken as it is (no chat template).
inline GenerationConfig greedy_config(std::int64_t n) {
  GenerationConfig c;
  c.max_new_tokens = n;
  c.ignore_eos = true;
  c.apply_chat_template = false;
  return c;
}

inline TestModel load_test_model(const std::filesystem::path& dir, std::int64_t num_blocks = 128,
                                 std::int64_t block_size = 4) {
  TestModel m;
  m.checkpoint = std::make_shared<ir::HfCheckpoint>(dir);
  models::KvCacheLayout kv;
  kv.num_blocks = num_blocks;
  kv.block_size = block_size;
  m.model = models::create_language_model(m.checkpoint->config(), m.checkpoint,
                                          std::make_unique<runtime::ReferenceOps>(), kv);
  return m;
}

}  // namespace kiln::testing
