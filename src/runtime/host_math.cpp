#include "runtime/host_math.hpp"

#include "kernels/elementwise.hpp"

namespace kiln::runtime {

double log_sum_exp(std::span<const float> x) {
  static const kernels::ElementwiseKernels kernels = kernels::find_elementwise_kernels(detected_isa());
  return kernels.log_sum_exp(x.data(), x.size());
}

}  // namespace kiln::runtime
