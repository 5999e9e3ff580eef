#include "runtime/gpu/gpu_devices.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::runtime::gpu {
namespace {

// Extension queries the Khronos headers name only in vendor headers, by value.
constexpr cl_device_info kSubGroupSizesIntel = 0x4108;  // CL_DEVICE_SUB_GROUP_SIZES_INTEL
constexpr cl_device_info kWarpSizeNv = 0x4003;          // CL_DEVICE_WARP_SIZE_NV

bool cpu_devices_allowed() {
  const char* value = std::getenv("KILN_OPENCL_CPU_DEVICES");
  return value != nullptr && std::string_view(value) == "1";
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  std::sort(words.begin(), words.end());
  return words;
}

bool has(const std::vector<std::string>& sorted, std::string_view word) {
  return std::binary_search(sorted.begin(), sorted.end(), word);
}

std::string type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "CPU";
}

std::vector<std::size_t> subgroup_sizes(const cl::Device& d, const std::vector<std::string>& extensions) {
  std::size_t bytes = 0;
  if (has(extensions, "cl_intel_subgroups") &&
      clGetDeviceInfo(d(), kSubGroupSizesIntel, 0, nullptr, &bytes) == CL_SUCCESS && bytes > 0) {
    std::vector<std::size_t> sizes(bytes / sizeof(std::size_t));
    if (clGetDeviceInfo(d(), kSubGroupSizesIntel, bytes, sizes.data(), nullptr) == CL_SUCCESS) return sizes;
  }
  cl_uint warp = 0;
  if (has(extensions, "cl_nv_device_attribute_query") &&
      clGetDeviceInfo(d(), kWarpSizeNv, sizeof(warp), &warp, nullptr) == CL_SUCCESS && warp > 0) {
    return {warp};
  }
  return {};
}

GpuDeviceInfo describe(const cl::Platform& platform, const cl::Device& d, std::size_t index) {
  GpuDeviceInfo info;
  info.name = fmt::format("{}.{}", kGpuDevice, index);
  info.full_name = d.getInfo<CL_DEVICE_NAME>();
  info.vendor = d.getInfo<CL_DEVICE_VENDOR>();
  info.type = type_name(d.getInfo<CL_DEVICE_TYPE>());
  info.platform = platform.getInfo<CL_PLATFORM_NAME>();
  info.device_version = d.getInfo<CL_DEVICE_VERSION>();
  info.driver_version = d.getInfo<CL_DRIVER_VERSION>();
  info.global_memory_bytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.max_allocation_bytes = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  info.local_memory_bytes = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.compute_units = static_cast<int>(d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
  info.max_work_group_size = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  info.extensions = split_words(d.getInfo<CL_DEVICE_EXTENSIONS>());
  info.subgroup_sizes = subgroup_sizes(d, info.extensions);
  info.fp16 = has(info.extensions, "cl_khr_fp16");
  info.intel_subgroups = has(info.extensions, "cl_intel_subgroups");
  info.subgroups = info.intel_subgroups || has(info.extensions, "cl_khr_subgroups");
  info.integer_dot_product = has(info.extensions, "cl_khr_integer_dot_product");
  return info;
}

}  // namespace

std::vector<GpuDevice> find_gpu_devices() {
  return gpu_call("listing OpenCL devices", [] {
    std::vector<cl::Platform> platforms;
    // With no ICD installed the loader reports CL_PLATFORM_NOT_FOUND_KHR: no devices, not an error.
    if (cl::Platform::get(&platforms) != CL_SUCCESS) return std::vector<GpuDevice>{};
    cl_device_type wanted = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR;
    if (cpu_devices_allowed()) wanted |= CL_DEVICE_TYPE_CPU;
    std::vector<GpuDevice> found;
    for (const cl::Platform& platform : platforms) {
      std::vector<cl::Device> devices;
      try {
        platform.getDevices(wanted, &devices);
      } catch (const cl::Error& e) {
        if (e.err() == CL_DEVICE_NOT_FOUND) continue;
        throw;
      }
      for (const cl::Device& d : devices) found.push_back({d, describe(platform, d, found.size())});
    }
    return found;
  });
}

bool is_gpu_device_name(std::string_view name) {
  if (!name.starts_with(kGpuDevice)) return false;
  const std::string_view rest = name.substr(kGpuDevice.size());
  return rest.empty() || (rest.size() > 1 && rest[0] == '.' &&
                          std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; }));
}

GpuDevice select_gpu_device(std::string_view name) {
  if (!is_gpu_device_name(name)) fail("'{}' is not a GPU device name (GPU, GPU.0, GPU.1, ...)", name);
  std::vector<GpuDevice> devices = find_gpu_devices();
  if (devices.empty()) {
    fail(ErrorKind::kNotFound,
         "no GPU device: no OpenCL platform reports a GPU{} (install the GPU's OpenCL runtime: Intel's "
         "intel-opencl-icd, NVIDIA's driver; `clinfo` lists what the loader finds)",
         cpu_devices_allowed() ? " or CPU device" : "");
  }
  std::size_t index = 0;
  if (name.size() > kGpuDevice.size()) {
    const std::string_view digits = name.substr(kGpuDevice.size() + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || index >= devices.size()) {
      std::vector<std::string> names;
      for (const GpuDevice& d : devices) names.push_back(fmt::format("{} ({})", d.info.name, d.info.full_name));
      fail(ErrorKind::kNotFound, "device '{}' does not exist; the GPU devices are {}", name, fmt::join(names, ", "));
    }
  }
  return std::move(devices[index]);
}

}  // namespace kiln::runtime::gpu
