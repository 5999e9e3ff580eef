#include "export/export_options.hpp"

#include <array>
#include <utility>

#include "util/error.hpp"

namespace kiln::exporter {
namespace {

template <typename E, std::size_t N>
E parse_named(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view name,
              std::string_view flag) {
  std::string accepted;
  for (const auto& [value, text] : table) {
    if (text == name) return value;
    accepted += accepted.empty() ? "" : ", ";
    accepted += text;
  }
  fail("{} '{}' is not supported (accepted: {})", flag, name, accepted);
}

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [v, text] : table) {
    if (v == value) return text;
  }
  return "?";
}

constexpr std::array<std::pair<SensitivityMetric, std::string_view>, 5> kMetrics{{
    {SensitivityMetric::kWeightQuantizationError, "weight_quantization_error"},
    {SensitivityMetric::kHessianInputActivation, "hessian_input_activation"},
    {SensitivityMetric::kMeanActivationVariance, "mean_activation_variance"},
    {SensitivityMetric::kMaxActivationVariance, "max_activation_variance"},
    {SensitivityMetric::kMeanActivationMagnitude, "mean_activation_magnitude"},
}};

constexpr std::array<std::pair<BackupPrecision, std::string_view>, 3> kBackups{{
    {BackupPrecision::kInt8Asym, "int8_asym"},
    {BackupPrecision::kInt8Sym, "int8_sym"},
    {BackupPrecision::kNone, "none"},
}};

// Flags that only a 4-bit (mixed-precision) export uses; NNCF refuses them for int8 and float.
void reject_4bit_flags(const ExportOptions& o, std::string_view format) {
  const auto refuse = [&](bool given, std::string_view flag) {
    if (given) fail("{} applies to int4 and nf4 exports only, not --weight-format {}", flag, format);
  };
  refuse(o.ratio.has_value(), "--ratio");
  refuse(o.all_layers, "--all-layers");
  refuse(o.awq, "--awq");
  refuse(o.scale_estimation, "--scale-estimation");
  refuse(o.gptq, "--gptq");
  refuse(o.sensitivity_metric.has_value(), "--sensitivity-metric");
  refuse(o.backup_precision.has_value(), "--backup-precision");
}

}  // namespace

std::string_view sensitivity_metric_name(SensitivityMetric m) { return name_of(kMetrics, m); }
std::string_view backup_precision_name(BackupPrecision b) { return name_of(kBackups, b); }
WeightScheme parse_weight_format(std::string_view name) {
  if (const std::optional<WeightScheme> scheme = parse_optimum_weight_format(name)) return *scheme;
  fail("--weight-format '{}' is not supported (accepted: fp32, fp16, bf16, int8, int4, nf4)", name);
}
SensitivityMetric parse_sensitivity_metric(std::string_view name) {
  return parse_named(kMetrics, name, "--sensitivity-metric");
}
BackupPrecision parse_backup_precision(std::string_view name) {
  return parse_named(kBackups, name, "--backup-precision");
}

ExportRecipe resolve_recipe(const ExportOptions& o, std::int64_t num_parameters) {
  ExportRecipe r;
  if (o.weight_format) {
    r.primary = *o.weight_format;
  } else {
    // optimum-cli: models over one billion parameters export with 8-bit weights by default.
    r.primary = num_parameters > kDefaultInt8Threshold ? WeightScheme::kInt8Asym : WeightScheme::kF32;
    r.weight_format_defaulted = true;
  }
  if (o.sym) r.primary = with_sym(r.primary);
  const std::string_view format = optimum_weight_format_name(r.primary);
  r.dataset = o.dataset;
  r.sample_tokens = o.sample_tokens;
  if (o.sample_tokens < 2) fail("--sample-tokens must be at least 2, got {}", o.sample_tokens);

  if (r.is_float() || r.is_int8()) {
    reject_4bit_flags(o, format);
    if (o.group_size && *o.group_size != -1) {
      fail("--group-size {} applies to int4 and nf4 exports; int8 is per channel (-1)", *o.group_size);
    }
    if (r.is_float() && o.sym) fail("--sym applies to quantised formats, not --weight-format {}", format);
    if (!o.dataset.empty())
      fail(
          "--dataset is used by --awq, --scale-estimation, --gptq or a data-aware --sensitivity-metric; "
          "--weight-format {} uses none of them",
          format);
    if (o.num_samples) fail("--num-samples needs --dataset");
    r.group_size = -1;
    r.backup = BackupPrecision::kNone;
    return r;
  }

  r.group_size = o.group_size.value_or(128);
  if (r.group_size == 0 || r.group_size < -1)
    fail("--group-size must be positive or -1 (per channel), got {}", r.group_size);
  r.ratio = o.ratio.value_or(1.0);
  if (!(r.ratio > 0.0 && r.ratio <= 1.0)) fail("--ratio must be in (0, 1], got {}", r.ratio);
  r.all_layers = o.all_layers;
  r.awq = o.awq;
  r.scale_estimation = o.scale_estimation;
  r.gptq = o.gptq;
  r.backup = o.backup_precision.value_or(BackupPrecision::kInt8Asym);
  r.sensitivity_metric = o.sensitivity_metric.value_or(o.dataset.empty() ? SensitivityMetric::kWeightQuantizationError
                                                                         : SensitivityMetric::kMaxActivationVariance);
  if (o.sensitivity_metric && r.ratio >= 1.0) {
    fail("--sensitivity-metric chooses which layers stay in the backup precision; it needs --ratio below 1");
  }
  if (o.dataset.empty()) {
    if (r.awq)
      fail("--awq needs --dataset (kiln implements data-aware AWQ: the scales come from calibration activations)");
    if (r.scale_estimation) fail("--scale-estimation needs --dataset");
    if (r.gptq) fail("--gptq needs --dataset");
    if (r.data_aware_metric()) {
      fail("--sensitivity-metric {} needs --dataset", sensitivity_metric_name(r.sensitivity_metric));
    }
    if (o.num_samples) fail("--num-samples needs --dataset");
  } else if (!r.awq && !r.scale_estimation && !r.gptq && !r.data_aware_metric()) {
    fail(
        "--dataset is given but nothing uses it: add --awq, --scale-estimation, --gptq, or --ratio below 1 with a "
        "data-aware --sensitivity-metric");
  }
  if (!o.dataset.empty()) {
    r.num_samples = o.num_samples.value_or(128);
    if (r.num_samples <= 0) fail("--num-samples must be positive, got {}", r.num_samples);
  }
  return r;
}

Json ExportRecipe::to_json() const {
  Json j = {{"weight_format", optimum_weight_format_name(primary)},
            {"weight_format_defaulted", weight_format_defaulted},
            {"primary_scheme", weight_scheme_name(primary)}};
  if (is_float()) return j;
  j["group_size"] = group_size;
  if (is_int8()) return j;
  j["ratio"] = ratio;
  j["all_layers"] = all_layers;
  j["awq"] = awq;
  j["scale_estimation"] = scale_estimation;
  j["gptq"] = gptq;
  j["sensitivity_metric"] = sensitivity_metric_name(sensitivity_metric);
  j["backup_precision"] = backup_precision_name(backup);
  if (!dataset.empty()) {
    j["dataset"] = dataset;
    j["num_samples"] = num_samples;
    j["sample_tokens"] = sample_tokens;
  }
  return j;
}

}  // namespace kiln::exporter
