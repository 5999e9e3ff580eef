// The GPU devices kiln can run on: every OpenCL device of type GPU or accelerator, in platform
// order, named "GPU.0", "GPU.1", ... ("GPU" is GPU.0). What each supports is probed at run time,
// never assumed from its vendor. With KILN_OPENCL_CPU_DEVICES=1 CPU OpenCL devices (PoCL) are
// listed too: that is how the GPU backend is tested on machines without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/gpu/opencl.hpp"

namespace kiln::runtime::gpu {

inline constexpr std::string_view kGpuDevice = "GPU";

struct GpuDeviceInfo {
  std::string name;            // "GPU.0"
  std::string full_name;       // CL_DEVICE_NAME
  std::string vendor;          // CL_DEVICE_VENDOR
  std::string type;            // "GPU", "accelerator" or "CPU"
  std::string platform;        // CL_PLATFORM_NAME
  std::string device_version;  // "OpenCL 3.0 ..."
  std::string driver_version;  // CL_DRIVER_VERSION
  std::uint64_t global_memory_bytes = 0;
  std::uint64_t max_allocation_bytes = 0;  // the largest single buffer
  std::uint64_t local_memory_bytes = 0;
  int compute_units = 0;
  std::size_t max_work_group_size = 0;
  // The subgroup sizes the device can run (Intel's list, or NVIDIA's warp size); empty where the
  // device does not say, and a kernel must then ask per kernel.
  std::vector<std::size_t> subgroup_sizes;
  bool fp16 = false;                 // cl_khr_fp16: half arithmetic
  bool subgroups = false;            // cl_khr_subgroups or cl_intel_subgroups
  bool intel_subgroups = false;      // cl_intel_subgroups: block reads and shuffles
  bool integer_dot_product = false;  // cl_khr_integer_dot_product, 8-bit packed
  std::vector<std::string> extensions;
};

struct GpuDevice {
  cl::Device device;
  GpuDeviceInfo info;
};

// What a model may take of the device's memory: 90% of it, the rest left for activations, program
// binaries and the driver. Weights and the KV cache are checked against this before a load.
inline std::uint64_t usable_memory_bytes(const GpuDeviceInfo& info) { return info.global_memory_bytes / 10 * 9; }

// All GPU devices, GPU.0 first; empty when there are none or no OpenCL runtime is installed
// (the ICD loader then reports no platforms).
std::vector<GpuDevice> find_gpu_devices();

// "GPU" or "GPU.N". Fails naming the devices found, or saying there is none and why.
GpuDevice select_gpu_device(std::string_view name);

// True for "GPU" and "GPU.<digits>".
bool is_gpu_device_name(std::string_view name);

}  // namespace kiln::runtime::gpu
