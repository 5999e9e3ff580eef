#include "cli/device_flags.hpp"

#include "runtime/device_info.hpp"

namespace kiln::cli {

void add_device_flags(CLI::App& cmd, DeviceFlags& f) {
  cmd.add_option("--device", f.device,
                 "CPU (compiled kernels), GPU or GPU.<n> (OpenCL; `kiln devices` lists them) or REFERENCE (scalar "
                 "oracle)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& name) {
            return runtime::is_device_name(name) ? std::string()
                                                 : "'" + name + "' is not a device: CPU, GPU, GPU.<n> or REFERENCE";
          },
          "DEVICE"));
  cmd.add_option("--property", f.properties,
                 "Device property NAME=VALUE, repeatable (e.g. KV_CACHE_PRECISION=u8, CACHE_DIR=DIR; "
                 "`kiln devices` lists them)");
}

runtime::DeviceProperties device_properties(const DeviceFlags& f) {
  return runtime::parse_device_properties(f.properties);
}

std::map<std::string, std::string> device_property_map(const DeviceFlags& f) {
  device_properties(f);  // validates every assignment
  std::map<std::string, std::string> map;
  for (const std::string& a : f.properties) {
    const std::size_t eq = a.find('=');
    map[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return map;
}

}  // namespace kiln::cli
