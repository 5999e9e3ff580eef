// The Khronos C++ bindings, configured once for kiln: OpenCL 3.0 API names with a run-time
// fallback to the 1.x calls (Oclgrind's platform is 1.2; PoCL, NVIDIA's and Intel's are 3.0), and
// exceptions, which gpu_call turns into a kiln::Error naming the failed call and its status.
#pragma once

#define CL_HPP_TARGET_OPENCL_VERSION 300
// NOTE: 110, not 120: Debian 12's bindings compile the run-time version check only below 120.
#define CL_HPP_MINIMUM_OPENCL_VERSION 110
#define CL_HPP_ENABLE_EXCEPTIONS
#include <CL/opencl.hpp>

#include <string_view>

#include "util/error.hpp"

namespace kiln::runtime::gpu {

// "CL_OUT_OF_RESOURCES" for -5; "status N" for a code the headers do not name.
std::string cl_status_name(cl_int status);

// Calls `f`, turning an OpenCL failure into "{what}: {clCall} failed with {CL_STATUS}".
template <typename F>
auto gpu_call(std::string_view what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const cl::Error& e) {
    fail("{}: {} failed with {}", what, e.what(), cl_status_name(e.err()));
  }
}

}  // namespace kiln::runtime::gpu
