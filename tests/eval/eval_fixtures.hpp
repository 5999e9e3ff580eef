// Shared fixtures of the eval tests: the tiny golden checkpoints loaded for eval, the held-out
// text, and what transformers computed on them (tests/data/eval/goldens.json, written by
// tools/eval/make_eval_goldens.py).
#pragma once

#include <filesystem>
#include <string>

#include "genai/model_loader.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"

namespace kiln::testing {

inline std::filesystem::path checkpoint_dir(const std::string& name) { return test_data_dir() / "checkpoints" / name; }

inline const Json& eval_goldens() {
  static const Json goldens = read_json_file(test_data_dir() / "eval" / "goldens.json");
  return goldens;
}

inline const std::string& heldout_small_text() {
  static const std::string text = read_file(test_data_dir() / "heldout" / "manpages-heldout-small.txt");
  return text;
}

// Loaded with one sequence of `context` tokens of KV cache, on the REFERENCE device: the oracle
// of these tests is transformers' f32 output, which the CPU default (f16 KV cache, bf16-rounded
// activations for bf16 checkpoints) only approximates; CPU is checked against REFERENCE in
// tests/runtime.
inline genai::LoadedModel load_for_eval(const std::filesystem::path& dir, std::int64_t context,
                                        std::int64_t sequences = 1) {
  return genai::load_model(dir, {.context_tokens = context, .max_sequences = sequences, .device = "REFERENCE"});
}

inline double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

}  // namespace kiln::testing
