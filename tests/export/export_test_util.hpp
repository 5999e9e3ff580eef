// Helpers for the export tests: exporting a golden checkpoint into a temporary directory, and
// comparing two models' next-token distributions on held-out text (KL divergence), the measure
// the quality tests order recipes by.
#pragma once

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "../models/golden_checkpoint.hpp"
#include "export/exporter.hpp"
#include "genai/model_loader.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"

namespace kiln::testing {

inline exporter::ExportOptions export_options(const std::filesystem::path& model, const std::filesystem::path& out) {
  exporter::ExportOptions o;
  o.model_dir = model;
  o.out_dir = out;
  o.show_progress = false;
  o.kiln_version = "test";
  o.command_line = {"kiln", "export", "--model", model.string(), out.string()};
  return o;
}

// Logits [tokens, vocab] of one full forward over `ids` through genai::load_model (IR or checkpoint).
inline std::vector<float> forward_logits(const std::filesystem::path& dir, const std::vector<std::int32_t>& ids) {
  // REFERENCE device: the exact path, since transformers' f32 logits are these tests' oracle (the
  // CPU default rounds the KV cache to f16; tests/runtime checks CPU against REFERENCE).
  genai::LoadedModel loaded =
      genai::load_model(dir, {.context_tokens = static_cast<std::int64_t>(ids.size()) + 16, .device = "REFERENCE"});
  std::vector<std::int32_t> blocks(static_cast<std::size_t>(loaded.model->kv_cache_layout().num_blocks));
  for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<std::int32_t>(i);
  const models::SequenceChunk chunk{ids, 0, blocks, models::LogitsMode::kAll};
  models::StepOutput out;
  loaded.model->step({&chunk, 1}, out);
  return out.logits;
}

// Mean over positions of KL(p || q) in nats, p and q the softmax of the two logit sets.
inline double mean_kl(const std::vector<float>& p_logits, const std::vector<float>& q_logits, std::size_t vocab) {
  const std::size_t rows = p_logits.size() / vocab;
  double total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* p = p_logits.data() + r * vocab;
    const float* q = q_logits.data() + r * vocab;
    const double pm = *std::max_element(p, p + vocab), qm = *std::max_element(q, q + vocab);
    double pz = 0, qz = 0;
    for (std::size_t i = 0; i < vocab; ++i) {
      pz += std::exp(p[i] - pm);
      qz += std::exp(q[i] - qm);
    }
    double kl = 0;
    for (std::size_t i = 0; i < vocab; ++i) {
      const double lp = p[i] - pm - std::log(pz), lq = q[i] - qm - std::log(qz);
      kl += std::exp(lp) * (lp - lq);
    }
    total += kl;
  }
  return total / static_cast<double>(rows);
}

// The first `n` tokens of the held-out man-page text under the model's tokenizer.
inline std::vector<std::int32_t> heldout_ids(const std::filesystem::path& model_dir, std::size_t n) {
  const Tokenizer tokenizer = Tokenizer::from_dir(model_dir);
  std::vector<std::int32_t> ids =
      tokenizer.encode(read_file(test_data_dir() / "heldout" / "manpages-heldout-small.txt"), false);
  ids.resize(std::min(ids.size(), n));
  return ids;
}

}  // namespace kiln::testing
