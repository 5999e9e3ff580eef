#include "runtime/properties.hpp"

#include <charconv>

#include "util/error.hpp"

namespace kiln::runtime {
namespace {

[[noreturn]] void fail_value(std::string_view name, std::string_view value, std::string_view accepted) {
  fail("property {}: '{}' is not accepted (accepted: {})", name, value, accepted);
}

std::int64_t parse_integer(std::string_view name, std::string_view value, std::int64_t min, std::string_view accepted) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < min) fail_value(name, value, accepted);
  return v;
}

constexpr std::string_view kThreadsAccepted = "0 (every allowed CPU) or a positive number of threads";
constexpr std::string_view kHintAccepted = "LATENCY, THROUGHPUT";
constexpr std::string_view kKvAccepted = "f32, f16, bf16, u8";
constexpr std::string_view kKvGroupAccepted =
    "a positive multiple of 16 (a group at least head_dim long covers the row)";
constexpr std::string_view kDynGroupAccepted = "0 (off) or a positive multiple of 32";
constexpr std::string_view kRequantizeAccepted = "f32, f16, bf16, int8_sym, int8_asym, int4_sym, int4_asym, nf4";
constexpr std::string_view kIsaAccepted = "scalar, avx2, avx512, amx (at most what the CPU has)";

const PropertySpec kSpecs[] = {
    {"INFERENCE_NUM_THREADS", "0", kThreadsAccepted, "threads that run a step, the caller included",
     [](DeviceProperties& p, std::string_view v) {
       p.inference_num_threads =
           static_cast<std::size_t>(parse_integer("INFERENCE_NUM_THREADS", v, 0, kThreadsAccepted));
     },
     [](const DeviceProperties& p) { return std::to_string(p.inference_num_threads); }},
    {"PERFORMANCE_HINT", "LATENCY", kHintAccepted,
     "LATENCY pins threads and spins between ops; THROUGHPUT leaves them unpinned and lets them sleep",
     [](DeviceProperties& p, std::string_view v) {
       if (v == "LATENCY") {
         p.performance_hint = PerformanceHint::kLatency;
       } else if (v == "THROUGHPUT") {
         p.performance_hint = PerformanceHint::kThroughput;
       } else {
         fail_value("PERFORMANCE_HINT", v, kHintAccepted);
       }
     },
     [](const DeviceProperties& p) {
       return std::string(p.performance_hint == PerformanceHint::kLatency ? "LATENCY" : "THROUGHPUT");
     }},
    {"KV_CACHE_PRECISION", "f16", kKvAccepted, "element type of the paged KV cache",
     [](DeviceProperties& p, std::string_view v) {
       const std::optional<ElementType> precision = parse_kv_precision(v);
       if (!precision) fail_value("KV_CACHE_PRECISION", v, kKvAccepted);
       p.kv_cache_precision = *precision;
     },
     [](const DeviceProperties& p) { return std::string(kv_precision_name(p.kv_cache_precision)); }},
    {"KV_CACHE_GROUP_SIZE", "32", kKvGroupAccepted, "u8 KV cache: values per scale and zero point",
     [](DeviceProperties& p, std::string_view v) {
       const std::int64_t g = parse_integer("KV_CACHE_GROUP_SIZE", v, 1, kKvGroupAccepted);
       if (g % 16 != 0) fail_value("KV_CACHE_GROUP_SIZE", v, kKvGroupAccepted);
       p.kv_cache_group_size = g;
     },
     [](const DeviceProperties& p) { return std::to_string(p.kv_cache_group_size); }},
    {"DYNAMIC_QUANTIZATION_GROUP_SIZE", "128", kDynGroupAccepted,
     "int4/int8 weights: quantise activations to int8 per group of this many values on the fly",
     [](DeviceProperties& p, std::string_view v) {
       const std::int64_t g = parse_integer("DYNAMIC_QUANTIZATION_GROUP_SIZE", v, 0, kDynGroupAccepted);
       if (g % 32 != 0) fail_value("DYNAMIC_QUANTIZATION_GROUP_SIZE", v, kDynGroupAccepted);
       p.dynamic_quantization_group_size = g;
     },
     [](const DeviceProperties& p) { return std::to_string(p.dynamic_quantization_group_size); }},
    {"CACHE_DIR", "", "a directory (created if missing); empty disables the compile cache",
     "where compiled (repacked) weights are kept between runs",
     [](DeviceProperties& p, std::string_view v) { p.cache_dir = std::filesystem::path(v); },
     [](const DeviceProperties& p) { return p.cache_dir.string(); }},
    {"GGUF_REQUANTIZE", "int8_asym", kRequantizeAccepted,
     "GGUF tensors of a type kiln cannot hold exactly (Q4_1, Q5_*, K-quants) are decoded and re-quantised to this, "
     "group 32 (Q8_0, Q4_0 and float tensors are kept exactly)",
     [](DeviceProperties& p, std::string_view v) {
       try {
         p.gguf_requantize = parse_weight_scheme(v);
       } catch (const Error&) {
         fail_value("GGUF_REQUANTIZE", v, kRequantizeAccepted);
       }
     },
     [](const DeviceProperties& p) { return std::string(weight_scheme_name(p.gguf_requantize)); }},
    {"ISA", "", kIsaAccepted, "force a lower kernel level than detected (tests, comparisons); empty: detected",
     [](DeviceProperties& p, std::string_view v) {
       if (v.empty()) {
         p.isa.reset();
         return;
       }
       try {
         p.isa = select_isa(parse_isa(v));  // an unknown name or a level above the CPU's
       } catch (const Error& e) {
         fail(e.kind(), "property ISA: {}", e.what());
       }
     },
     [](const DeviceProperties& p) { return p.isa ? std::string(isa_name(*p.isa)) : std::string(); }},
};

const PropertySpec& find_spec(std::string_view name) {
  for (const PropertySpec& spec : kSpecs) {
    if (spec.name == name) return spec;
  }
  std::string names;
  for (const PropertySpec& spec : kSpecs) names += (names.empty() ? "" : ", ") + std::string(spec.name);
  fail("unknown property '{}' (accepted: {})", name, names);
}

}  // namespace

std::span<const PropertySpec> device_property_specs() { return kSpecs; }

void set_device_property(DeviceProperties& properties, std::string_view name, std::string_view value) {
  find_spec(name).set(properties, value);
}

std::string get_device_property(const DeviceProperties& properties, std::string_view name) {
  return find_spec(name).get(properties);
}

DeviceProperties parse_device_properties(std::span<const std::string> assignments, DeviceProperties base) {
  for (const std::string& a : assignments) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos) fail("property '{}': expected NAME=VALUE, e.g. KV_CACHE_PRECISION=u8", a);
    set_device_property(base, std::string_view(a).substr(0, eq), std::string_view(a).substr(eq + 1));
  }
  return base;
}

}  // namespace kiln::runtime
