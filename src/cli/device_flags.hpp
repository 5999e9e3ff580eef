// The --device and --property flags every command that runs a model shares: the device name
// ("CPU", "REFERENCE") and NAME=VALUE device properties (runtime/properties.hpp), parsed into
// the typed properties here, at the edge, so a bad name or value fails before anything loads.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "runtime/properties.hpp"

namespace kiln::cli {

struct DeviceFlags {
  std::string device = "CPU";
  std::vector<std::string> properties;  // NAME=VALUE, in order
};

void add_device_flags(CLI::App& cmd, DeviceFlags& flags);

// The typed properties (throws kiln::Error naming a bad property).
runtime::DeviceProperties device_properties(const DeviceFlags& flags);

// The same assignments by name, for PipelineProperties::device_properties (validated first).
std::map<std::string, std::string> device_property_map(const DeviceFlags& flags);

}  // namespace kiln::cli
