#include "runtime/gpu/gpu_context.hpp"

namespace kiln::runtime::gpu {

GpuContext::GpuContext(GpuDevice device) : device_(std::move(device)) {
  gpu_call("opening " + device_.info.name, [&] {
    context_ = cl::Context(device_.device);
    queue_ = cl::CommandQueue(context_, device_.device);
  });
}

}  // namespace kiln::runtime::gpu
