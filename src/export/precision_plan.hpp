// Which scheme each tensor of the model gets, following NNCF's weight compression: quantised
// formats compress every matrix and embedding; for int4/nf4 the ratio-defining weights (every
// matrix except the output head, plus embedding and head with --all-layers) are the candidates
// for the primary precision, and with --ratio R below 1 the least sensitive of them take it until
// R of their parameters would be reached, the rest (and embedding / head) the backup precision.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "export/export_options.hpp"
#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"
#include "models/tensor_specs.hpp"

namespace kiln::exporter {

struct TensorPlan {
  models::TensorSpec spec;
  WeightScheme scheme = WeightScheme::kF32;
  std::int64_t group_size = 0;  // columns per scale group (the input width for per channel); 0 for floats
  bool ratio_defining = false;  // a candidate for the primary precision
  bool primary = false;         // got the primary (4-bit) precision

  std::int64_t num_parameters() const;
};

// True for the tensors --ratio chooses among (see the file comment).
bool is_ratio_defining(const models::TensorSpec& spec, const ExportRecipe& recipe);

// The plan in tensor_specs order. `scores` (ratio-defining tensor name → sensitivity, higher =
// more sensitive) is needed only when recipe.ratio < 1. `source` gives each tensor's stored dtype
// (kept for float exports of the same precision and for --backup-precision none).
std::vector<TensorPlan> plan_tensors(const ir::ModelConfig& config, const ir::TensorSource& source,
                                     const ExportRecipe& recipe, const std::map<std::string, double>& scores);

}  // namespace kiln::exporter
