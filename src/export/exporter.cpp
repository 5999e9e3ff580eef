#include "export/exporter.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <set>

#include "export/layer_compressor.hpp"
#include "export/precision_plan.hpp"
#include "export/progress_bar.hpp"
#include "export/sensitivity.hpp"
#include "export/side_files.hpp"
#include "export/tensor_writer.hpp"
#include "ir/gguf_model.hpp"
#include "ir/hf_checkpoint.hpp"
#include "ir/ir_writer.hpp"
#include "ir/manifest.hpp"
#include "ir/openvino_model.hpp"
#include "models/tensor_specs.hpp"
#include "runtime/thread_pool.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace kiln::exporter {
namespace {

namespace fs = std::filesystem;

// Statistics above this are refused rather than risk the machine's memory (GPTQ keeps in² doubles per input).
constexpr std::uint64_t kStatisticsBudgetBytes = 6ull << 30;

std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

// What each weight's input must record, given the plan's candidates and the recipe.
std::map<std::string, StatisticsConfig> statistics_needed(const std::vector<TensorPlan>& plan, const ExportRecipe& r) {
  std::map<std::string, StatisticsConfig> watched;
  for (const TensorPlan& p : plan) {
    if (!p.ratio_defining || p.spec.role == models::TensorRole::kEmbedding) continue;
    StatisticsConfig c;
    // AWQ and scale estimation read only the per-sample means, which every InputStatistics keeps.
    c.hessian = r.gptq ? HessianMode::kFull : HessianMode::kNone;
    watched.emplace(p.spec.name, c);
  }
  return watched;
}

std::uint64_t statistics_bytes(const std::vector<TensorPlan>& plan,
                               const std::map<std::string, StatisticsConfig>& watched, std::uint64_t num_samples) {
  std::uint64_t total = 0;
  for (const TensorPlan& p : plan) {
    auto it = watched.find(p.spec.name);
    if (it == watched.end()) continue;
    const auto in = static_cast<std::uint64_t>(p.spec.shape[1]);
    const StatisticsConfig& c = it->second;
    if (c.hessian == HessianMode::kFull) total += in * in * 8;
    total += num_samples * in * 4 + in * 32;  // per-sample means, per-channel sums
  }
  return total;  // an upper bound: q/k/v and gate/up share one input but are counted apiece
}

Json source_file_digests(const fs::path& dir) {
  Json files = Json::object();
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) names.insert(entry.path().filename().string());
  }
  for (const std::string& name : names) files[name] = sha256_file(dir / name);
  return files;
}

class Exporter {
 public:
  Exporter(const ExportOptions& options, const BackendFactory& backend) : options_(options), backend_(backend) {}

  ExportResult run();

 private:
  void check_cancel() const {
    if (options_.cancel && options_.cancel->load())
      fail("export interrupted: {} not written", options_.out_dir.string());
  }
  void calibrate();
  std::map<std::string, double> sensitivity_scores();
  Json manifest_body(const ExportResult& result, double seconds) const;

  const ExportOptions& options_;
  BackendFactory backend_;
  std::shared_ptr<ir::HfCheckpoint> checkpoint_;
  ExportRecipe recipe_;
  std::vector<TensorPlan> plan_;
  std::optional<CalibrationData> calibration_;
  std::map<std::string, std::shared_ptr<InputStatistics>> statistics_;
  std::unique_ptr<ProgressBar> progress_;
  Json tensor_records_ = Json::object();
  // Calibration statistics and AWQ's search share the cores while the backend's own pool waits.
  // NOTE: the calibration backend runs on this pool too: with a pool of its own, each side's
  // worker slept through the other's regions and a core idled while it woke.
  std::shared_ptr<ThreadPool> pool_ =
      std::make_shared<ThreadPool>(ThreadPoolOptions{.num_threads = 0, .pin_threads = false, .spin_us = 20});
};

void Exporter::calibrate() {
  const Tokenizer tokenizer = Tokenizer::from_dir(options_.model_dir);
  calibration_ = load_calibration_data(recipe_.dataset, tokenizer, checkpoint_->config().bos_token_id,
                                       recipe_.num_samples, recipe_.sample_tokens);
  const auto watched = statistics_needed(plan_, recipe_);
  const std::uint64_t bytes = statistics_bytes(plan_, watched, calibration_->samples.size());
  if (bytes > kStatisticsBudgetBytes) {
    fail(ErrorKind::kUnsupported, "calibration statistics for this model would need about {} MiB (limit {} MiB){}",
         bytes >> 20, kStatisticsBudgetBytes >> 20,
         recipe_.gptq ? ": --gptq keeps each layer's full input Hessian" : "");
  }
  CalibrationRun run;
  run.backend = backend_;
  run.cancel = options_.cancel;
  run.pool = pool_;
  run.run_head = std::any_of(watched.begin(), watched.end(), [](const auto& w) { return w.first == "lm_head.weight"; });
  run.on_sample = [this](std::int64_t done, std::int64_t total) {
    progress_->update(done, fmt::format("calibrating: sample {}/{}", done, total));
  };
  statistics_ = collect_statistics(checkpoint_->config(), checkpoint_, *calibration_, watched, run);
}

std::map<std::string, double> Exporter::sensitivity_scores() {
  std::map<std::string, double> scores;
  for (const TensorPlan& p : plan_) {
    if (!p.ratio_defining) continue;
    check_cancel();
    const ir::TensorView& t = *checkpoint_->find(p.spec.name);
    const Int8Error error = int8_quantization_error(t);
    auto stats = statistics_.find(p.spec.name);
    scores[p.spec.name] = sensitivity_score(recipe_.sensitivity_metric, p.spec, error,
                                            stats == statistics_.end() ? nullptr : stats->second.get());
    release_source_pages(t);
  }
  return scores;
}

ExportResult Exporter::run() {
  Stopwatch clock;
  if (ir::GgufModel::is_gguf_file(options_.model_dir)) {
    fail(ErrorKind::kUnsupported,
         "{}: kiln export compresses Hugging Face checkpoints; a GGUF file runs as it is (kiln run --model FILE), "
         "and with --property CACHE_DIR=DIR its import is kept there as kiln's IR",
         options_.model_dir.string());
  }
  if (ir::OpenVinoModel::is_openvino_dir(options_.model_dir)) {
    fail(ErrorKind::kUnsupported,
         "{}: kiln export compresses Hugging Face checkpoints; an OpenVINO IR runs as it is (kiln run --model DIR), "
         "its int4 / int8 weights read without re-quantising",
         options_.model_dir.string());
  }
  checkpoint_ = std::make_shared<ir::HfCheckpoint>(options_.model_dir);
  const ir::ModelConfig& config = checkpoint_->config();
  models::validate_tensors(config, *checkpoint_);
  ExportResult result;
  for (const models::TensorSpec& spec : models::tensor_specs(config)) {
    std::int64_t n = 1;
    for (std::int64_t d : spec.shape) n *= d;
    result.num_parameters += n;
  }
  recipe_ = resolve_recipe(options_, result.num_parameters);
  result.recipe = recipe_;
  // The plan before sensitivities: which tensors are candidates (and what statistics they need).
  ExportRecipe all_primary = recipe_;
  all_primary.ratio = 1.0;
  plan_ = plan_tensors(config, *checkpoint_, all_primary, {});
  const auto num_tensors = static_cast<std::int64_t>(plan_.size());
  progress_ = std::make_unique<ProgressBar>(num_tensors + recipe_.num_samples, options_.show_progress);
  StagingDirectory staging(options_.out_dir);  // fails early when OUT_DIR exists
  Stopwatch phase;
  const auto end_phase = [&](const char* name) {
    result.phase_seconds[name] = phase.elapsed_ms() / 1000.0;
    phase.restart();
  };
  if (recipe_.needs_calibration()) calibrate();
  end_phase("calibration");
  if (recipe_.ratio < 1.0) plan_ = plan_tensors(config, *checkpoint_, recipe_, sensitivity_scores());
  end_phase("sensitivity");

  ir::IrWriter writer(staging.path());
  LayerCompressor compressor(*checkpoint_, recipe_, statistics_, writer, pool_.get());
  for (std::size_t i = 0; i < plan_.size(); ++i) {
    check_cancel();
    const TensorPlan& p = plan_[i];
    progress_->update(recipe_.num_samples + static_cast<std::int64_t>(i), p.spec.name);
    const std::string method = compressor.write(plan_, i);
    tensor_records_[p.spec.name] = {{"scheme", weight_scheme_name(p.scheme)}, {"method", method}};
    if (!is_float_scheme(p.scheme)) tensor_records_[p.spec.name]["group_size"] = p.group_size;
    ++result.tensors_by_scheme[std::string(weight_scheme_name(p.scheme))];
  }
  copy_side_files(options_.model_dir, staging.path());
  end_phase("compression");
  const std::string bin_sha = writer.finish(config, "kiln " + options_.kiln_version);
  result.model_bin_bytes = fs::file_size(staging.path() / ir::kIrModelBin);
  end_phase("finish");
  result.seconds = clock.elapsed_ms() / 1000.0;
  result.peak_rss_bytes = peak_rss_bytes();
  check_cancel();
  ir::write_manifest(staging.path(), manifest_body(result, result.seconds), {{std::string(ir::kIrModelBin), bin_sha}});
  progress_->finish();
  staging.commit();
  result.out_dir = options_.out_dir;
  return result;
}

Json Exporter::manifest_body(const ExportResult& result, double seconds) const {
  Json calibration = nullptr;
  if (calibration_) {
    calibration = {{"dataset", calibration_->dataset},       {"sha256", calibration_->sha256},
                   {"text_bytes", calibration_->text_bytes}, {"num_samples", calibration_->samples.size()},
                   {"sample_tokens", recipe_.sample_tokens}, {"tokens", calibration_->num_tokens()}};
  }
  return {{"format_version", ir::kIrFormatVersion},
          {"kiln_version", options_.kiln_version},
          {"command_line", options_.command_line},
          {"source", {{"dir", options_.model_dir.string()}, {"files", source_file_digests(options_.model_dir)}}},
          {"recipe", recipe_.to_json()},
          {"calibration", calibration},
          {"num_parameters", result.num_parameters},
          {"tensors", tensor_records_},
          {"duration_s", seconds},
          {"phase_seconds", result.phase_seconds},
          {"peak_rss_bytes", result.peak_rss_bytes}};
}

}  // namespace

ExportResult export_model(const ExportOptions& options, const BackendFactory& backend) {
  Exporter exporter(options, backend);
  return exporter.run();
}

}  // namespace kiln::exporter
