// The GPU device's kernel sources (OpenCL C 1.2, optional extensions behind #ifdef), compiled
// into the library from opencl/<name>.cl and built for a device at run time. Each has a scalar
// twin in reference/ that its tests compare against.
#pragma once

#include <string_view>

namespace kiln::kernels::opencl {}  // namespace kiln::kernels::opencl
