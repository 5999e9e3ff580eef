// One GPU device opened for work: its OpenCL context and the in-order queue every kernel of a
// model is enqueued on (one queue, so kernels see each other's results without events).
#pragma once

#include "runtime/gpu/gpu_devices.hpp"

namespace kiln::runtime::gpu {

class GpuContext {
 public:
  explicit GpuContext(GpuDevice device);

  const GpuDeviceInfo& info() const { return device_.info; }
  const cl::Device& device() const { return device_.device; }
  const cl::Context& context() const { return context_; }
  cl::CommandQueue& queue() { return queue_; }

 private:
  GpuDevice device_;
  cl::Context context_;
  cl::CommandQueue queue_;
};

}  // namespace kiln::runtime::gpu
