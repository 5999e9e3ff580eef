// What `kiln export` was asked (ExportOptions, optimum-cli's flags) and what it will do
// (ExportRecipe): the defaults of optimum-cli + NNCF resolved, and combinations NNCF refuses
// refused here too, each with a message naming the flag.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/weight_format.hpp"
#include "util/json.hpp"

namespace kiln::exporter {

enum class SensitivityMetric : std::uint8_t {
  kWeightQuantizationError,
  kHessianInputActivation,
  kMeanActivationVariance,
  kMaxActivationVariance,
  kMeanActivationMagnitude,
};
enum class BackupPrecision : std::uint8_t { kInt8Asym, kInt8Sym, kNone };

// Names as optimum-cli spells them ("int4", "max_activation_variance", "int8_asym", ...);
// parse_* throw a kiln::Error naming the flag and listing what is accepted. --weight-format is
// parsed as parse_optimum_weight_format (ir/weight_format.hpp) does: "int4" is int4_asym until --sym.
std::string_view sensitivity_metric_name(SensitivityMetric m);
std::string_view backup_precision_name(BackupPrecision b);
WeightScheme parse_weight_format(std::string_view name);
SensitivityMetric parse_sensitivity_metric(std::string_view name);
BackupPrecision parse_backup_precision(std::string_view name);

// Models above this many parameters get int8 weights when no --weight-format is given.
inline constexpr std::int64_t kDefaultInt8Threshold = 1'000'000'000;

struct ExportOptions {
  std::filesystem::path model_dir;  // Hugging Face checkpoint
  std::filesystem::path out_dir;    // must not exist
  // --weight-format as optimum-cli reads it (int8 / int4: the asymmetric scheme); --sym makes the
  // given or defaulted int8 / int4 scheme symmetric.
  std::optional<WeightScheme> weight_format;
  bool sym = false;
  std::optional<std::int64_t> group_size;  // -1 = per channel
  std::optional<double> ratio;
  bool all_layers = false;
  bool awq = false;
  bool scale_estimation = false;
  bool gptq = false;
  std::string dataset;  // "" (none), "builtin", or a text file
  std::optional<std::int64_t> num_samples;
  std::int64_t sample_tokens = 128;  // tokens per calibration sample (kiln's own knob)
  std::optional<SensitivityMetric> sensitivity_metric;
  std::optional<BackupPrecision> backup_precision;

  std::vector<std::string> command_line;      // for the manifest, exactly as typed
  std::string kiln_version;                   // "0.1.0 (git commit)", for model.json and the manifest
  bool show_progress = true;                  // a bar on stderr when it is a terminal
  const std::atomic<bool>* cancel = nullptr;  // set (by a SIGINT handler) to stop cleanly
};

struct ExportRecipe {
  bool weight_format_defaulted = false;       // chosen by the >1B rule, not by the user
  WeightScheme primary = WeightScheme::kF32;  // the scheme of ratio-defining weights
  std::int64_t group_size = -1;               // -1 = per channel
  double ratio = 1.0;
  bool all_layers = false;
  bool awq = false;
  bool scale_estimation = false;
  bool gptq = false;
  SensitivityMetric sensitivity_metric = SensitivityMetric::kWeightQuantizationError;
  BackupPrecision backup = BackupPrecision::kInt8Asym;
  std::string dataset;
  std::int64_t num_samples = 0;
  std::int64_t sample_tokens = 0;

  bool is_float() const { return is_float_scheme(primary); }
  bool is_4bit() const { return is_4bit_scheme(primary); }
  bool is_int8() const { return primary == WeightScheme::kInt8Sym || primary == WeightScheme::kInt8Asym; }
  bool data_aware_metric() const {
    return ratio < 1.0 && sensitivity_metric != SensitivityMetric::kWeightQuantizationError;
  }
  bool needs_calibration() const { return !dataset.empty(); }
  Json to_json() const;
};

// Applies the defaults (weight format by size, int4/nf4 group 128, int4 asym unless --sym, int8
// per channel, ratio 1, backup int8_asym, metric max_activation_variance with a dataset and
// weight_quantization_error without, 128 samples) and checks the combination.
ExportRecipe resolve_recipe(const ExportOptions& options, std::int64_t num_parameters);

}  // namespace kiln::exporter
