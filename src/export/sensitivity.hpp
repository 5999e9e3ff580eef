// Layer sensitivities for --ratio, as NNCF's mixed-precision criteria define them. Every metric
// starts from the layer's 8-bit quantisation error (int8_asym, per channel: NNCF's backup
// config) and, for the data-aware ones, multiplies by a statistic of the layer's input:
//   weight_quantization_error   1 / (max over rows of mean (w - ŵ)² + eps)
//   hessian_input_activation    ‖W - Ŵ‖_F · 2 · mean over samples of mean(x²)
//   mean_activation_variance    1 / (max-mean error + eps) · mean over samples of mean_c var_t(x)
//   max_activation_variance     1 / (max-mean error + eps) · mean over samples of max_c var_t(x)
//   mean_activation_magnitude   1 / (max-mean error + eps) · mean over samples of mean_c max_t |x|
// Data-aware metrics give embeddings the lowest sensitivity (they have no input statistics), so
// with --all-layers they take the primary precision first, as in NNCF.
#pragma once

#include "export/activation_statistics.hpp"
#include "export/export_options.hpp"
#include "ir/tensor_view.hpp"
#include "models/tensor_specs.hpp"

namespace kiln::exporter {

struct Int8Error {
  double max_mean = 0;   // max over rows of the mean squared error along the row
  double frobenius = 0;  // ‖W - Ŵ‖_F
};

// Streams the float tensor row by row; nothing the size of the tensor is allocated.
Int8Error int8_quantization_error(const ir::TensorView& tensor);

// Higher = more sensitive. `stats` (the layer's input) is needed by the data-aware metrics.
double sensitivity_score(SensitivityMetric metric, const models::TensorSpec& spec, const Int8Error& error,
                         const InputStatistics* stats);

}  // namespace kiln::exporter
