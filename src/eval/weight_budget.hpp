// The weight half of `kiln budget`: the bytes every tensor takes for an export choice (weight
// format, group size, ratio, all-layers), grouped by class: embedding, head, attention, MLP,
// norms, and the scales and zero points of the quantised matrices. Invariant: the byte counts
// are those of ir/weight_format.hpp's canonical layouts, i.e. what model.bin stores.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"
#include "ir/weight_format.hpp"
#include "models/tensor_specs.hpp"

namespace kiln::eval {

enum class WeightClass : std::uint8_t { kEmbedding, kHead, kAttention, kMlp, kNorm, kScales, kZeroPoints };
inline constexpr std::size_t kNumWeightClasses = 7;

// "embedding", "head", "attention", "mlp", "norms", "scales", "zero points".
std::string_view weight_class_name(WeightClass c);

// The class a tensor's own bytes count in (its scales and zero points count in theirs).
WeightClass class_of(models::TensorRole role);

// An export's compression choice, with optimum-cli's conventions (`--weight-format int4` is
// asymmetric int4; embedding and head stay int8 unless --all-layers; the matrices a ratio < 1
// leaves out are int8_asym per channel).
struct CompressionChoice {
  WeightScheme scheme = WeightScheme::kF16;
  std::optional<std::int64_t> group_size = std::nullopt;  // 4-bit default 128, int8 per channel; -1: per channel
  double ratio = 1.0;                                     // share of decoder-layer matrix parameters in `scheme`
  bool all_layers = false;                                // embedding and head in `scheme` too

  // The group size a matrix with `in` columns gets under `scheme` (in = per channel).
  std::int64_t resolved_group_size(WeightScheme s, std::int64_t in) const;
};

// "int4" (int4_asym, int4_sym with `sym`), "int8" (likewise), "fp16", "bf16", "fp32", "nf4", or a
// canonical scheme name ("int4_sym", ...). Anything else, or `sym` with anything but int4 and
// int8, is a kiln::Error naming the flag and listing what is accepted.
WeightScheme parse_weight_format_name(std::string_view name, bool sym = false);

// Throws kiln::Error naming the flag when a choice does not apply to the scheme or is out of range.
void validate_compression_choice(const CompressionChoice& format);

// One tensor as the export would store it.
struct TensorPlan {
  std::string name;
  models::TensorRole role = models::TensorRole::kNorm;
  WeightScheme scheme = WeightScheme::kF32;
  std::int64_t num_params = 0;
  std::int64_t in_features = 0;  // matrices: columns (a group this wide is per channel)
  std::int64_t group_size = 0;   // quantised matrices only
  std::uint64_t data_bytes = 0;
  std::uint64_t scale_bytes = 0;
  std::uint64_t zero_point_bytes = 0;
};

struct WeightBudget {
  std::vector<TensorPlan> tensors;                       // in forward order
  std::array<std::uint64_t, kNumWeightClasses> bytes{};  // by WeightClass
  std::int64_t num_params = 0;
  double share_4bit = 0.0;  // of decoder-layer matrix parameters (the ratio actually reached)

  std::uint64_t total_bytes() const;
};

// The budget for `format` over the tensors config.json implies (models::tensor_specs).
WeightBudget plan_weights(const ir::ModelConfig& config, const CompressionChoice& format);

// What a checkpoint's tensors take as stored (no scales or zero points): the "as is" column.
WeightBudget measure_stored_weights(const ir::ModelConfig& config, const ir::TensorSource& source);

}  // namespace kiln::eval
