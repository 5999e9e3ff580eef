#include "runtime/device_info.hpp"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>

#include "runtime/gpu/gpu_devices.hpp"
#include "runtime/thread_pool.hpp"
#include "util/error.hpp"

namespace kiln::runtime {
namespace {

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// A decimal integer, or 0 when the text is not one (sysfs entries a hypervisor leaves empty).
int to_int(std::string_view text) {
  int value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// "32K" / "1024K" / "32M" as sysfs writes them.
std::uint64_t parse_cache_size(const std::string& text) {
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
  if (i < text.size() && text[i] == 'K') value <<= 10;
  if (i < text.size() && text[i] == 'M') value <<= 20;
  return value;
}

// Number of CPUs in a sysfs list such as "0-3,8".
int count_cpu_list(const std::string& list) {
  int count = 0;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string part = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::size_t dash = part.find('-');
    count += dash == std::string::npos ? 1 : to_int(part.substr(dash + 1)) - to_int(part.substr(0, dash)) + 1;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return count;
}

std::vector<CacheLevel> read_caches() {
  std::vector<CacheLevel> caches;
  const std::filesystem::path base = "/sys/devices/system/cpu/cpu0/cache";
  for (int index = 0; index < 8; ++index) {
    const std::filesystem::path dir = base / ("index" + std::to_string(index));
    if (!std::filesystem::exists(dir / "level")) break;
    CacheLevel c;
    c.level = to_int(read_line(dir / "level"));
    c.type = read_line(dir / "type");
    c.size_bytes = parse_cache_size(read_line(dir / "size"));
    c.shared_by_cpus = count_cpu_list(read_line(dir / "shared_cpu_list"));
    caches.push_back(c);
  }
  return caches;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown x86-64 CPU";
}

}  // namespace

std::uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string name;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> name >> kib >> unit) {
    if (name == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

std::vector<std::string> device_names() { return {std::string(kCpuDevice), std::string(kReferenceDevice)}; }

bool is_device_name(std::string_view name) {
  return name == kCpuDevice || name == kReferenceDevice || gpu::is_gpu_device_name(name);
}

DeviceInfo describe_device(std::string_view name) {
  DeviceInfo d;
  d.name = std::string(name);
  d.allowed_cpus = static_cast<int>(allowed_cpus().size());
  d.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  d.full_name = cpu_model_name();
  d.caches = read_caches();
  if (name == kCpuDevice) {
    d.isa = select_isa();
    d.features = describe_cpu_features();
  } else if (name == kReferenceDevice) {
    d.isa = Isa::kScalar;
    d.features = "scalar f32 oracle (double accumulation), f32 KV cache, one thread";
  } else {
    fail("device '{}' is not available (accepted: {}, {})", name, kCpuDevice, kReferenceDevice);
  }
  return d;
}

}  // namespace kiln::runtime
