// The OpenCL device the GPU tests run on, and buffers to and from it. CPU OpenCL devices are
// allowed (KILN_OPENCL_CPU_DEVICES=1), so every machine with Debian's pocl-opencl-icd runs the
// tests; without any OpenCL device they skip, saying so.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "runtime/gpu/gpu_context.hpp"
#include "runtime/gpu/program_cache.hpp"

namespace kiln::testing {

using runtime::gpu::GpuContext;
using runtime::gpu::GpuDevice;

// The first GPU device (PoCL's CPU device on a machine without a GPU), opened once per process;
// nullptr when there is none.
inline GpuContext* test_gpu() {
  static const std::unique_ptr<GpuContext> gpu = [] {
    ::setenv("KILN_OPENCL_CPU_DEVICES", "1", 1);
    std::vector<GpuDevice> devices = runtime::gpu::find_gpu_devices();
    return devices.empty() ? nullptr : std::make_unique<GpuContext>(std::move(devices.front()));
  }();
  return gpu.get();
}

// No device is a failure, not a skip: PoCL's CPU device is one of tools/debian-packages.txt.
#define KILN_REQUIRE_GPU(gpu)                                                                          \
  ::kiln::runtime::gpu::GpuContext* gpu = ::kiln::testing::test_gpu();                                 \
  if (gpu == nullptr) {                                                                                \
    GTEST_FAIL() << "no OpenCL device: tools/install_dependencies.sh installs PoCL (pocl-opencl-icd)"; \
  }

template <typename T>
cl::Buffer upload(GpuContext& gpu, const std::vector<T>& host) {
  // A zero-length buffer is invalid in OpenCL: keep one element.
  const std::size_t bytes = std::max<std::size_t>(host.size(), 1) * sizeof(T);
  cl::Buffer buffer(gpu.context(), CL_MEM_READ_WRITE, bytes);
  if (!host.empty()) gpu.queue().enqueueWriteBuffer(buffer, CL_TRUE, 0, host.size() * sizeof(T), host.data());
  return buffer;
}

template <typename T>
std::vector<T> download(GpuContext& gpu, const cl::Buffer& buffer, std::size_t count) {
  std::vector<T> host(count);
  if (count > 0) gpu.queue().enqueueReadBuffer(buffer, CL_TRUE, 0, count * sizeof(T), host.data());
  return host;
}

}  // namespace kiln::testing
