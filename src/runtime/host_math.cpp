#include "runtime/host_math.hpp"

#include "kernels/elementwise.hpp"

namespace kiln::runtime {

namespace {

const kernels::ElementwiseKernels& host_kernels() {
  static const kernels::ElementwiseKernels kernels = kernels::find_elementwise_kernels(detected_isa());
  return kernels;
}

}  // namespace

double log_sum_exp(std::span<const float> x) { return host_kernels().log_sum_exp(x.data(), x.size()); }

std::size_t argmax(std::span<const float> x) { return host_kernels().argmax(x.data(), x.size()); }

}  // namespace kiln::runtime
