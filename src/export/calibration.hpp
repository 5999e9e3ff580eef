// Calibration: the text the model is run on (a file or the built-in man-page text), cut into
// token samples, and one pass of the model itself over them through RecordingOps, which yields
// the input statistics of the watched linear layers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "export/activation_statistics.hpp"
#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"
#include "kiln/tokenizer.hpp"
#include "models/ops.hpp"

namespace kiln::exporter {

// The text behind `--dataset builtin` (src/export/data/SOURCE.md says what it is).
std::string_view builtin_calibration_text();

struct CalibrationData {
  std::string dataset;  // "builtin" or the file as given
  std::string sha256;   // of the text
  std::int64_t text_bytes = 0;
  std::vector<std::vector<std::int32_t>> samples;  // each [sample_tokens] (BOS first when the model has one)

  std::int64_t num_tokens() const;
};

// Tokenises the text and cuts `num_samples` samples of `sample_tokens` tokens, evenly spread
// over the text (non-overlapping). Too little text for that many is an error naming the counts.
CalibrationData load_calibration_data(const std::string& dataset, const Tokenizer& tokenizer,
                                      std::optional<std::int32_t> bos_token_id, std::int64_t num_samples,
                                      std::int64_t sample_tokens);

// `pool`: the threads calibration runs on, shared with the statistics so one set of workers
// serves the whole forward (null: the backend makes its own).
using BackendFactory = std::function<std::unique_ptr<models::Ops>(const std::shared_ptr<ThreadPool>& pool)>;
using SampleCallback = std::function<void(std::int64_t done, std::int64_t total)>;

struct CalibrationRun {
  BackendFactory backend;    // default: the reference backend
  SampleCallback on_sample;  // progress
  // Compute the output head for every token: needed only when the head's input is watched
  // (--all-layers); otherwise it is skipped, saving the largest matrix of the model.
  bool run_head = false;
  const std::atomic<bool>* cancel = nullptr;
  std::shared_ptr<ThreadPool> pool;  // shares the statistics' and the backend's work between cores (null: one)
};

// Runs the model over every sample, recording the inputs of `watched` weights. Returns
// weight name → statistics (shared between weights with one input).
std::map<std::string, std::shared_ptr<InputStatistics>> collect_statistics(
    const ir::ModelConfig& config, std::shared_ptr<const ir::TensorSource> source, const CalibrationData& data,
    const std::map<std::string, StatisticsConfig>& watched, const CalibrationRun& run);

}  // namespace kiln::exporter
