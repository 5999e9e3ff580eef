// Oracle: the property table in runtime/properties.cpp as documented: each name parses its
// accepted values into the typed field and prints back the same string; unknown names and bad
// values are kiln::Errors that name the property and list what is accepted; the CPU device's
// description reports the selected ISA and this machine's caches.
#include <gtest/gtest.h>

#include "runtime/device_info.hpp"
#include "runtime/properties.hpp"
#include "support/test_support.hpp"

namespace kiln::runtime {
namespace {

TEST(DeviceProperties, DefaultsRoundTripThroughTheirNames) {
  const DeviceProperties defaults;
  for (const PropertySpec& spec : device_property_specs()) {
    EXPECT_EQ(get_device_property(defaults, spec.name), spec.default_value) << spec.name;
    DeviceProperties p;
    set_device_property(p, spec.name, spec.default_value);
    EXPECT_EQ(get_device_property(p, spec.name), spec.default_value) << spec.name;
    EXPECT_FALSE(spec.help.empty()) << spec.name;
  }
}

TEST(DeviceProperties, ParsesEveryAcceptedValue) {
  const std::vector<std::string> assignments = {"INFERENCE_NUM_THREADS=3",
                                                "PERFORMANCE_HINT=THROUGHPUT",
                                                "KV_CACHE_PRECISION=u8",
                                                "KV_CACHE_GROUP_SIZE=64",
                                                "DYNAMIC_QUANTIZATION_GROUP_SIZE=0",
                                                "CACHE_DIR=/tmp/somewhere",
                                                "GGUF_REQUANTIZE=int4_sym",
                                                "ISA=scalar"};
  const DeviceProperties p = parse_device_properties(assignments);
  EXPECT_EQ(p.inference_num_threads, 3u);
  EXPECT_EQ(p.performance_hint, PerformanceHint::kThroughput);
  EXPECT_EQ(p.kv_cache_precision, ElementType::kU8);
  EXPECT_EQ(p.kv_cache_group_size, 64);
  EXPECT_EQ(p.dynamic_quantization_group_size, 0);
  EXPECT_EQ(p.cache_dir, "/tmp/somewhere");
  EXPECT_EQ(p.gguf_requantize, WeightScheme::kInt4Sym);
  ASSERT_TRUE(p.isa.has_value());
  EXPECT_EQ(*p.isa, Isa::kScalar);
  for (const char* kv : {"f32", "f16", "bf16", "u8"}) {
    DeviceProperties q;
    set_device_property(q, "KV_CACHE_PRECISION", kv);
    EXPECT_EQ(get_device_property(q, "KV_CACHE_PRECISION"), kv);
  }
}

TEST(DeviceProperties, BadNamesAndValuesSayWhatIsAccepted) {
  DeviceProperties p;
  EXPECT_KILN_ERROR(set_device_property(p, "KV_PRECISION", "u8"), "unknown property 'KV_PRECISION'",
                    "KV_CACHE_PRECISION", "INFERENCE_NUM_THREADS", "CACHE_DIR");
  EXPECT_KILN_ERROR(set_device_property(p, "KV_CACHE_PRECISION", "f8"), "KV_CACHE_PRECISION", "'f8'",
                    "f32, f16, bf16, u8");
  EXPECT_KILN_ERROR(set_device_property(p, "PERFORMANCE_HINT", "fast"), "PERFORMANCE_HINT", "LATENCY, THROUGHPUT");
  EXPECT_KILN_ERROR(set_device_property(p, "INFERENCE_NUM_THREADS", "-1"), "INFERENCE_NUM_THREADS", "'-1'");
  EXPECT_KILN_ERROR(set_device_property(p, "INFERENCE_NUM_THREADS", "2x"), "INFERENCE_NUM_THREADS", "'2x'");
  EXPECT_KILN_ERROR(set_device_property(p, "KV_CACHE_GROUP_SIZE", "24"), "KV_CACHE_GROUP_SIZE", "multiple of 16");
  EXPECT_KILN_ERROR(set_device_property(p, "DYNAMIC_QUANTIZATION_GROUP_SIZE", "48"), "DYNAMIC_QUANTIZATION_GROUP_SIZE",
                    "multiple of 32");
  EXPECT_KILN_ERROR(set_device_property(p, "GGUF_REQUANTIZE", "q4_k"), "GGUF_REQUANTIZE", "'q4_k'", "int8_asym");
  EXPECT_KILN_ERROR(set_device_property(p, "ISA", "avx1024"), "property ISA", "avx1024", "scalar, avx2, avx512, amx");
  if (!isa_supported(Isa::kAmx))
    EXPECT_KILN_ERROR(set_device_property(p, "ISA", "amx"), "property ISA", "not supported");
  const std::vector<std::string> no_equals = {"KV_CACHE_PRECISION"};
  EXPECT_KILN_ERROR(parse_device_properties(no_equals), "NAME=VALUE");
  // A failed assignment leaves the earlier value.
  EXPECT_EQ(p.kv_cache_precision, ElementType::kF16);
}

TEST(DeviceInfo, DescribesTheCpuAndRejectsUnknownDevices) {
  const DeviceInfo cpu = describe_device("CPU");
  EXPECT_EQ(cpu.isa, select_isa());
  EXPECT_EQ(cpu.features, describe_cpu_features());
  EXPECT_GE(cpu.allowed_cpus, 1);
  EXPECT_GE(cpu.online_cpus, cpu.allowed_cpus);
  EXPECT_FALSE(cpu.full_name.empty());
  for (const CacheLevel& c : cpu.caches) {
    EXPECT_GE(c.level, 1);
    EXPECT_GT(c.size_bytes, 0u);
  }
  EXPECT_EQ(describe_device("REFERENCE").isa, Isa::kScalar);
  EXPECT_KILN_ERROR(describe_device("GPU"), "device 'GPU'", "CPU, REFERENCE");
}

}  // namespace
}  // namespace kiln::runtime
