#include "eval/weight_budget.hpp"

#include <functional>
#include <numeric>

#include "util/error.hpp"

namespace kiln::eval {
namespace {

constexpr std::int64_t kDefault4BitGroupSize = 128;  // optimum-cli's default for int4
// The precision of matrices a ratio < 1 leaves out, and of embedding and head under a 4-bit
// format without --all-layers (NNCF's backup mode).
constexpr WeightScheme kBackupScheme = WeightScheme::kInt8Asym;

std::int64_t num_params(const std::vector<std::int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

// Vectors (norm gains, biases) are never quantised: f32 in quantised exports, the export's own
// type in float ones (docs/FORMAT.md).
WeightScheme vector_scheme(WeightScheme format) { return is_float_scheme(format) ? format : WeightScheme::kF32; }

void add(WeightBudget& b, TensorPlan plan) {
  b.bytes[static_cast<std::size_t>(class_of(plan.role))] += plan.data_bytes;
  b.bytes[static_cast<std::size_t>(WeightClass::kScales)] += plan.scale_bytes;
  b.bytes[static_cast<std::size_t>(WeightClass::kZeroPoints)] += plan.zero_point_bytes;
  b.num_params += plan.num_params;
  b.tensors.push_back(std::move(plan));
}

TensorPlan plan_tensor(const models::TensorSpec& spec, WeightScheme scheme, const CompressionChoice& format) {
  TensorPlan p{.name = spec.name, .role = spec.role, .scheme = scheme, .num_params = num_params(spec.shape)};
  if (spec.use == models::WeightUse::kVector) {
    p.scheme = vector_scheme(format.scheme);
    p.data_bytes = code_bytes(p.scheme, static_cast<std::size_t>(p.num_params));
    return p;
  }
  const auto out = static_cast<std::size_t>(spec.shape[0]);
  const auto in = static_cast<std::size_t>(spec.shape[1]);
  p.in_features = spec.shape[1];
  p.data_bytes = weight_data_bytes(scheme, out, in);
  if (!is_float_scheme(scheme)) {
    p.group_size = format.resolved_group_size(scheme, spec.shape[1]);
    const auto g = static_cast<std::size_t>(p.group_size);
    p.scale_bytes = scale_bytes(scheme, out, in, g);
    p.zero_point_bytes = zero_point_bytes(scheme, out, in, g);
  }
  return p;
}

}  // namespace

WeightClass class_of(models::TensorRole role) {
  switch (role) {
    case models::TensorRole::kEmbedding: return WeightClass::kEmbedding;
    case models::TensorRole::kHead: return WeightClass::kHead;
    case models::TensorRole::kAttention: return WeightClass::kAttention;
    case models::TensorRole::kMlp: return WeightClass::kMlp;
    case models::TensorRole::kNorm: return WeightClass::kNorm;
  }
  return WeightClass::kNorm;
}

std::string_view weight_class_name(WeightClass c) {
  switch (c) {
    case WeightClass::kEmbedding: return "embedding";
    case WeightClass::kHead: return "head";
    case WeightClass::kAttention: return "attention";
    case WeightClass::kMlp: return "mlp";
    case WeightClass::kNorm: return "norms";
    case WeightClass::kScales: return "scales";
    case WeightClass::kZeroPoints: return "zero points";
  }
  return "?";
}

std::int64_t CompressionChoice::resolved_group_size(WeightScheme s, std::int64_t in) const {
  // A group size only shapes the format's own scheme; backup int8 is per channel.
  if (s != scheme) return in;
  const std::int64_t g = group_size.value_or(is_4bit_scheme(s) ? kDefault4BitGroupSize : -1);
  return g <= 0 || g > in ? in : g;
}

WeightScheme parse_weight_format_name(std::string_view name, bool sym) {
  if (const std::optional<WeightScheme> family = parse_optimum_weight_format(name)) {
    const bool int8_or_int4 = *family == WeightScheme::kInt8Asym || *family == WeightScheme::kInt4Asym;
    if (sym && !int8_or_int4) fail("--sym applies to --weight-format int4 and int8, not '{}'", name);
    return sym ? with_sym(*family) : *family;
  }
  if (sym) fail("--sym applies to --weight-format int4 and int8, not '{}'", name);
  for (const WeightScheme s : kAllWeightSchemes) {
    if (weight_scheme_name(s) == name) return s;
  }
  std::string accepted = "int4, int8, fp16, fp32";
  for (const WeightScheme s : kAllWeightSchemes) accepted += fmt::format(", {}", weight_scheme_name(s));
  fail("--weight-format '{}' is not a weight format (accepted: {})", name, accepted);
}

void validate_compression_choice(const CompressionChoice& f) {
  if (!(f.ratio > 0.0 && f.ratio <= 1.0)) fail("--ratio must be in (0, 1], got {}", f.ratio);
  if (f.ratio < 1.0 && !is_4bit_scheme(f.scheme)) {
    fail("--ratio applies to 4-bit formats (int4, int4_sym, int4_asym, nf4), not {}", weight_scheme_name(f.scheme));
  }
  if (f.group_size && *f.group_size != -1 && *f.group_size <= 0) {
    fail("--group-size must be positive, or -1 for per-channel, got {}", *f.group_size);
  }
  if (f.group_size && is_float_scheme(f.scheme)) {
    fail("--group-size applies to quantised formats, not {}", weight_scheme_name(f.scheme));
  }
}

std::uint64_t WeightBudget::total_bytes() const {
  return std::accumulate(bytes.begin(), bytes.end(), std::uint64_t{0});
}

WeightBudget plan_weights(const ir::ModelConfig& config, const CompressionChoice& format) {
  validate_compression_choice(format);
  const std::vector<models::TensorSpec> specs = models::tensor_specs(config);
  std::int64_t layer_matrix_params = 0;
  for (const auto& s : specs) {
    if (s.use == models::WeightUse::kMatrix && s.layer >= 0) layer_matrix_params += num_params(s.shape);
  }
  // NOTE: the exporter picks which matrices a ratio < 1 keeps in 4 bits by sensitivity; sizes
  // depend only on how many parameters land on each side, so we fill in forward order, leaving
  // in int8 any matrix that would push the 4-bit share past the ratio.
  const double budget_4bit = format.ratio * static_cast<double>(layer_matrix_params);
  std::int64_t params_4bit = 0;
  WeightBudget b;
  for (const auto& s : specs) {
    WeightScheme scheme = format.scheme;
    if (is_4bit_scheme(format.scheme) && s.use != models::WeightUse::kVector) {
      if (s.layer < 0) {  // embedding, head
        scheme = format.all_layers ? format.scheme : kBackupScheme;
      } else if (static_cast<double>(params_4bit + num_params(s.shape)) <= budget_4bit * (1 + 1e-12)) {
        params_4bit += num_params(s.shape);
      } else {
        scheme = kBackupScheme;
      }
    }
    add(b, plan_tensor(s, scheme, format));
  }
  if (is_4bit_scheme(format.scheme) && layer_matrix_params > 0) {
    b.share_4bit = static_cast<double>(params_4bit) / static_cast<double>(layer_matrix_params);
  }
  return b;
}

WeightBudget measure_stored_weights(const ir::ModelConfig& config, const ir::TensorSource& source) {
  models::validate_tensors(config, source);
  WeightBudget b;
  for (const auto& s : models::tensor_specs(config)) {
    const ir::TensorView& t = *source.find(s.name);
    TensorPlan p{.name = s.name,
                 .role = s.role,
                 .num_params = t.num_elements(),
                 .in_features = t.shape.size() == 2 ? t.shape[1] : 0,
                 .data_bytes = t.bytes.size()};
    if (t.quantization) {  // an exported IR: codes, scales and zero points as written
      p.scheme = t.quantization->scheme;
      p.group_size = t.quantization->group_size;
      p.scale_bytes = t.quantization->scales.size();
      p.zero_point_bytes = t.quantization->zero_points.size();
    } else {
      p.scheme = t.dtype == ElementType::kF32   ? WeightScheme::kF32
                 : t.dtype == ElementType::kF16 ? WeightScheme::kF16
                                                : WeightScheme::kBf16;
    }
    add(b, std::move(p));
  }
  return b;
}

}  // namespace kiln::eval
