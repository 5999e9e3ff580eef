// `kiln devices`: each device with its kernel level (and the CPU features behind it), the CPUs
// this process may use and the caches, then every device property with its default and what it
// accepts.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "runtime/core.hpp"

namespace kiln::cli {
namespace {

std::string format_bytes(std::uint64_t bytes) {
  return bytes >= (1u << 20) ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} KiB", bytes >> 10);
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
  fmt::print("\nproperties (--property NAME=VALUE):\n");
  for (const runtime::PropertySpec& p : runtime::device_property_specs()) {
    fmt::print("  {:<32} default '{}'; {}\n  {:<32} accepted: {}\n", p.name, p.default_value, p.help, "", p.accepted);
  }
}

}  // namespace

void register_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List devices (ISA level, CPUs, caches) and their properties");
  cmd->callback(print_devices);
}

}  // namespace kiln::cli
