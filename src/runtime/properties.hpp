// The typed properties a model is compiled with for a device, each declared once with its name
// (as users of OpenVINO know them), default, accepted values and help. Strings are parsed only at
// the edges (CLI flags, bindings) through set_device_property; an unknown name or a bad value is
// a kiln::Error that lists what is accepted. Inside, code reads the DeviceProperties fields.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/weight_format.hpp"
#include "kernels/cpu_isa.hpp"
#include "models/kv_layout.hpp"

namespace kiln::runtime {

enum class PerformanceHint : std::uint8_t {
  kLatency,     // one request at a time: threads pinned to cores and spinning between ops
  kThroughput,  // many requests / a shared machine: threads unpinned, sleeping soon when idle
};

struct DeviceProperties {
  std::size_t inference_num_threads = 0;  // 0: every CPU this process may run on
  PerformanceHint performance_hint = PerformanceHint::kLatency;
  ElementType kv_cache_precision = ElementType::kF16;
  std::int64_t kv_cache_group_size = 32;                   // u8 KV only
  std::int64_t dynamic_quantization_group_size = 128;      // 0: int4/int8 weights take f32 activations
  std::filesystem::path cache_dir{};                       // empty: no compile cache
  WeightScheme gguf_requantize = WeightScheme::kInt8Asym;  // see ir::GgufImportOptions
  std::optional<Isa> isa{};                                // nullopt: the best this CPU has
};

struct PropertySpec {
  std::string_view name;
  std::string_view default_value;
  std::string_view accepted;  // for help and errors
  std::string_view help;
  void (*set)(DeviceProperties& properties, std::string_view value);  // parses; throws kiln::Error
  std::string (*get)(const DeviceProperties& properties);
};

// Every property, in the order `kiln devices` lists them.
std::span<const PropertySpec> device_property_specs();

// Parses `value` into the property `name`. Throws kiln::Error naming the property and listing
// the accepted names or values.
void set_device_property(DeviceProperties& properties, std::string_view name, std::string_view value);

// The current value of `name` as its string form. Throws for an unknown name.
std::string get_device_property(const DeviceProperties& properties, std::string_view name);

// Applies NAME=VALUE assignments in order (the CLI's repeatable --property flag).
DeviceProperties parse_device_properties(std::span<const std::string> assignments, DeviceProperties base = {});

}  // namespace kiln::runtime
