// Internal: each ISA's element-wise kernels, defined in that ISA's translation unit.
#pragma once

#include "kernels/elementwise/elementwise_kernels.hpp"

namespace kiln::kernels {

ElementwiseKernels avx2_elementwise_kernels();
ElementwiseKernels avx512_elementwise_kernels();

}  // namespace kiln::kernels
