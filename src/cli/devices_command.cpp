// `kiln devices`: each device with its kernel level (and the CPU features behind it), the CPUs
// this process may use and the caches; each OpenCL GPU with what it supports; then every device
// property with its default and what it accepts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "runtime/core.hpp"
#include "runtime/gpu/gpu_devices.hpp"

namespace kiln::cli {
namespace {

std::string format_bytes(std::uint64_t bytes) {
  return bytes >= (1u << 20) ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} KiB", bytes >> 10);
}

std::string yes_no(bool value) { return value ? "yes" : "no"; }

void print_gpu_devices() {
  const std::vector<runtime::gpu::GpuDevice> gpus = runtime::gpu::find_gpu_devices();
  if (gpus.empty()) {
    fmt::print("GPU\n  no GPU device: no OpenCL platform reports one (`clinfo` lists what the loader finds)\n");
    return;
  }
  for (const runtime::gpu::GpuDevice& gpu : gpus) {
    const runtime::gpu::GpuDeviceInfo& d = gpu.info;
    fmt::print("{}\n  device    {} ({}, {})\n  vendor    {}\n  platform  {}\n  driver    {}\n", d.name, d.full_name,
               d.type, d.device_version, d.vendor, d.platform, d.driver_version);
    fmt::print("  memory    {} global, largest buffer {}, {} local\n", format_bytes(d.global_memory_bytes),
               format_bytes(d.max_allocation_bytes), format_bytes(d.local_memory_bytes));
    fmt::print(
        "  compute   {} units, work-groups up to {}, subgroup sizes {}\n", d.compute_units, d.max_work_group_size,
        d.subgroup_sizes.empty() ? std::string("per kernel") : fmt::format("{}", fmt::join(d.subgroup_sizes, ", ")));
    fmt::print("  supports  fp16 {}, subgroups {}, intel subgroups {}, int8 dot product {}\n", yes_no(d.fp16),
               yes_no(d.subgroups), yes_no(d.intel_subgroups), yes_no(d.integer_dot_product));
    fmt::print("  extensions {}\n", fmt::join(d.extensions, " "));
  }
}

void print_devices() {
  const runtime::Core core;
  for (const std::string& name : core.available_devices()) {
    const runtime::DeviceInfo d = core.get_device_info(name);
    fmt::print("{}\n  cpu       {}\n  kernels   {}\n  features  {}\n  cpus      {} usable of {} online\n", d.name,
               d.full_name, isa_name(d.isa), d.features, d.allowed_cpus, d.online_cpus);
    for (const runtime::CacheLevel& c : d.caches) {
      fmt::print("  cache     L{} {:<11} {:>8}, shared by {} cpu(s)\n", c.level, c.type, format_bytes(c.size_bytes),
                 c.shared_by_cpus);
    }
  }
  print_gpu_devices();
  fmt::print("\nproperties (--property NAME=VALUE):\n");
  for (const runtime::PropertySpec& p : runtime::device_property_specs()) {
    fmt::print("  {:<32} default '{}'; {}\n  {:<32} accepted: {}\n", p.name, p.default_value, p.help, "", p.accepted);
  }
}

}  // namespace

void register_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "devices", "List devices (CPU: ISA level, CPUs, caches; GPU: OpenCL devices) and their properties");
  cmd->callback(print_devices);
}

}  // namespace kiln::cli
