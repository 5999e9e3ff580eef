#include "export/sensitivity.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "export/group_quantizer.hpp"
#include "ir/tensor_convert.hpp"
#include "util/error.hpp"

namespace kiln::exporter {

Int8Error int8_quantization_error(const ir::TensorView& tensor) {
  const std::int64_t out = tensor.shape.front();
  const std::int64_t in = tensor.shape.size() > 1 ? tensor.shape[1] : 1;
  std::vector<float> row(static_cast<std::size_t>(in)), row_hat(static_cast<std::size_t>(in));  // [in]
  Int8Error e;
  double sum_sq = 0;
  for (std::int64_t r = 0; r < out; ++r) {
    ir::convert_to_f32(tensor, r * in, in, row.data());
    fake_quantize(WeightScheme::kInt8Asym, row, rtn_params(WeightScheme::kInt8Asym, row), row_hat);
    double row_sq = 0;
    for (std::int64_t c = 0; c < in; ++c) {
      const double d = static_cast<double>(row[c]) - row_hat[c];
      row_sq += d * d;
    }
    sum_sq += row_sq;
    e.max_mean = std::max(e.max_mean, row_sq / static_cast<double>(in));
  }
  e.frobenius = std::sqrt(sum_sq);
  return e;
}

double sensitivity_score(SensitivityMetric metric, const models::TensorSpec& spec, const Int8Error& error,
                         const InputStatistics* stats) {
  const double inverse_error = 1.0 / (error.max_mean + FLT_EPSILON);
  if (metric == SensitivityMetric::kWeightQuantizationError) return inverse_error;
  if (spec.role == models::TensorRole::kEmbedding) return 0.0;
  if (stats == nullptr) fail(ErrorKind::kInternal, "sensitivity of '{}': no input statistics", spec.name);
  switch (metric) {
    case SensitivityMetric::kHessianInputActivation: return error.frobenius * stats->hessian_trace();
    case SensitivityMetric::kMeanActivationVariance: return inverse_error * stats->mean_variance();
    case SensitivityMetric::kMaxActivationVariance: return inverse_error * stats->max_variance();
    case SensitivityMetric::kMeanActivationMagnitude: return inverse_error * stats->mean_magnitude();
    case SensitivityMetric::kWeightQuantizationError: break;
  }
  return inverse_error;
}

}  // namespace kiln::exporter
