// What `kiln devices` reports about a device: for the CPU its model name, the kernel level kiln
// selects (and the features behind it), the CPUs this process may use, and the cache sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu_isa.hpp"

namespace kiln::runtime {

inline constexpr std::string_view kCpuDevice = "CPU";
// The scalar f32 oracle backend, selectable for comparisons and tests.
inline constexpr std::string_view kReferenceDevice = "REFERENCE";

struct CacheLevel {
  int level = 0;
  std::string type;  // "Data", "Instruction", "Unified"
  std::uint64_t size_bytes = 0;
  int shared_by_cpus = 0;
};

struct DeviceInfo {
  std::string name;        // "CPU"
  std::string full_name;   // "AMD EPYC 9554 64-Core Processor"
  Isa isa = Isa::kScalar;  // the kernel level selected by default
  std::string features;    // describe_cpu_features()
  int allowed_cpus = 0;    // CPUs this process may run on (affinity mask)
  int online_cpus = 0;
  std::vector<CacheLevel> caches;  // of CPU 0, from sysfs; empty where sysfs does not say
};

// Memory the kernel says a new allocation can get without swapping (MemAvailable in
// /proc/meminfo), in bytes; 0 when it does not say.
std::uint64_t available_memory_bytes();

// The host's devices: CPU, REFERENCE (GPUs are listed by gpu/gpu_devices.hpp).
std::vector<std::string> device_names();

// CPU, REFERENCE, GPU or GPU.<index>: a name Core accepts (a GPU must also exist).
bool is_device_name(std::string_view name);

// Describes one device; throws kiln::Error for an unknown name, listing the accepted ones.
DeviceInfo describe_device(std::string_view name);

}  // namespace kiln::runtime
