// The tiny checkpoints in tests/data/checkpoints with what Hugging Face transformers computed on
// them (tools/make_golden.py): prompt ids, full-forward logits, greedy continuations.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ir/hf_checkpoint.hpp"
#include "ir/tensor_convert.hpp"
#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln::testing {

struct GoldenPrompt {
  std::string prompt;
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> greedy_ids;
  std::string greedy_text;
  std::vector<float> logits;  // [ids.size(), vocab]
};

struct GoldenCheckpoint {
  std::filesystem::path dir;
  std::shared_ptr<ir::HfCheckpoint> checkpoint;
  std::vector<GoldenPrompt> prompts;
};

inline const std::vector<std::string>& golden_checkpoint_names() {
  static const std::vector<std::string> names{"llama3_tiny", "llama2_tiny",  "llama_bias_tiny", "qwen2_tiny",
                                              "qwen3_tiny",  "mistral_tiny", "phi3_tiny"};
  return names;
}

inline std::filesystem::path golden_checkpoint_dir(const std::string& name) {
  return test_data_dir() / "checkpoints" / name;
}

inline GoldenCheckpoint load_golden_checkpoint(const std::string& name) {
  GoldenCheckpoint g;
  g.dir = golden_checkpoint_dir(name);
  g.checkpoint = std::make_shared<ir::HfCheckpoint>(g.dir);
  const Json golden = read_json_file(g.dir / "golden.json");
  ir::SafetensorsFile logits(g.dir / "golden_logits.safetensors");
  for (const Json& r : golden["records"]) {
    GoldenPrompt p;
    p.prompt = r["prompt"].get<std::string>();
    p.ids = r["ids"].get<std::vector<std::int32_t>>();
    p.greedy_ids = r["greedy_ids"].get<std::vector<std::int32_t>>();
    p.greedy_text = r["greedy_text"].get<std::string>();
    p.logits = ir::to_f32(logits.tensors().at(r["logits_tensor"].get<std::string>()));
    g.prompts.push_back(std::move(p));
  }
  return g;
}

}  // namespace kiln::testing
