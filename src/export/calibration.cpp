#include "export/calibration.hpp"

#include <numeric>
#include <set>

#include "export/recording_ops.hpp"
#include "models/model_factory.hpp"
#include "runtime/reference/reference_ops.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace kiln::exporter {

std::int64_t CalibrationData::num_tokens() const {
  std::int64_t n = 0;
  for (const auto& s : samples) n += static_cast<std::int64_t>(s.size());
  return n;
}

CalibrationData load_calibration_data(const std::string& dataset, const Tokenizer& tokenizer,
                                      std::optional<std::int32_t> bos_token_id, std::int64_t num_samples,
                                      std::int64_t sample_tokens) {
  CalibrationData data;
  data.dataset = dataset;
  const std::string text = dataset == "builtin" ? std::string(builtin_calibration_text()) : read_file(dataset);
  data.sha256 = sha256_hex(text);
  data.text_bytes = static_cast<std::int64_t>(text.size());
  const std::vector<std::int32_t> ids = tokenizer.encode(text, /*add_special_tokens=*/false);
  // Each sample starts with BOS when the model has one, as a tokenizer call on each text would.
  const std::int64_t body = sample_tokens - (bos_token_id ? 1 : 0);
  const std::int64_t available = static_cast<std::int64_t>(ids.size()) / body;
  if (available < num_samples) {
    fail("--dataset {}: {} tokens make {} samples of {} tokens, fewer than --num-samples {}", dataset, ids.size(),
         available, sample_tokens, num_samples);
  }
  for (std::int64_t i = 0; i < num_samples; ++i) {
    // Evenly spread windows: sample i takes window floor(i * available / num_samples).
    const std::int64_t window = i * available / num_samples;
    std::vector<std::int32_t> sample;
    sample.reserve(static_cast<std::size_t>(sample_tokens));
    if (bos_token_id) sample.push_back(*bos_token_id);
    sample.insert(sample.end(), ids.begin() + window * body, ids.begin() + (window + 1) * body);
    data.samples.push_back(std::move(sample));
  }
  return data;
}

std::map<std::string, std::shared_ptr<InputStatistics>> collect_statistics(
    const ir::ModelConfig& config, std::shared_ptr<const ir::TensorSource> source, const CalibrationData& data,
    const std::map<std::string, StatisticsConfig>& watched, const CalibrationRun& run) {
  std::unique_ptr<models::Ops> backend =
      run.backend ? run.backend(run.pool) : std::make_unique<runtime::ReferenceOps>();
  // NOTE: without the head nothing reads the last layer's MLP output (it only joins the residual
  // stream the head would normalise), so that product (1/7 of a layer's) is left out.
  std::set<std::string> unread;
  if (!run.run_head) unread.insert(fmt::format("model.layers.{}.mlp.down_proj.weight", config.num_layers - 1));
  auto recording = std::make_unique<RecordingOps>(std::move(backend), watched, run.pool.get(), std::move(unread));
  RecordingOps* recorder = recording.get();
  std::int64_t longest = 0;
  for (const auto& s : data.samples) longest = std::max(longest, static_cast<std::int64_t>(s.size()));
  models::KvCacheLayout kv;
  kv.block_size = 16;
  kv.num_blocks = (longest + kv.block_size - 1) / kv.block_size;
  auto model = models::create_language_model(config, std::move(source), std::move(recording), kv);
  std::vector<std::int32_t> blocks(static_cast<std::size_t>(kv.num_blocks));
  std::iota(blocks.begin(), blocks.end(), 0);
  models::StepOutput out;
  const auto total = static_cast<std::int64_t>(data.samples.size());
  for (std::int64_t i = 0; i < total; ++i) {
    if (run.cancel && run.cancel->load()) fail("export interrupted during calibration");
    // Each sample is its own sequence from position 0, reusing the same KV blocks.
    const models::SequenceChunk chunk{data.samples[static_cast<std::size_t>(i)], 0, blocks,
                                      run.run_head ? models::LogitsMode::kAll : models::LogitsMode::kNone};
    recorder->begin_sample();
    model->step({&chunk, 1}, out);
    recorder->end_sample();
    if (run.on_sample) run.on_sample(i + 1, total);
  }
  return recorder->take_statistics();
}

}  // namespace kiln::exporter
