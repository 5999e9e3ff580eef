// End to end through the binary. Oracles: the CPU's own description (describe_device, itself
// checked in tests/runtime), the affinity mask the child process inherits (narrowed here to one
// CPU), sysfs's cache sizes for CPU 0, and the property table the parser uses.
#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>

#include "runtime/device_info.hpp"
#include "runtime/properties.hpp"
#include "support/test_support.hpp"

namespace kiln {
namespace {

// Restores the test process's CPU affinity when it goes out of scope.
class AffinityGuard {
 public:
  AffinityGuard() { sched_getaffinity(0, sizeof(original_), &original_); }
  ~AffinityGuard() { sched_setaffinity(0, sizeof(original_), &original_); }
  const cpu_set_t& original() const { return original_; }

 private:
  cpu_set_t original_;
};

TEST(DevicesCommand, ListsBothDevicesWithKernelsCpusAndProperties) {
  const runtime::DeviceInfo cpu = runtime::describe_device(runtime::kCpuDevice);
  const auto r = testing::run_kiln({"devices"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("CPU\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nREFERENCE\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("  kernels   {}\n", isa_name(cpu.isa))), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  kernels   scalar\n"), std::string::npos) << r.out;  // REFERENCE
  EXPECT_NE(r.out.find(fmt::format("  cpus      {} usable of {} online", cpu.allowed_cpus, cpu.online_cpus)),
            std::string::npos)
      << r.out;
  for (const runtime::PropertySpec& p : runtime::device_property_specs()) {
    EXPECT_NE(r.out.find(fmt::format("  {:<32} default '{}'", p.name, p.default_value)), std::string::npos) << p.name;
  }
}

TEST(DevicesCommand, CountsTheCpusTheProcessMayUse) {
  AffinityGuard guard;
  if (CPU_COUNT(&guard.original()) < 2) GTEST_SKIP() << "needs two usable CPUs to narrow the mask";
  int first = 0;
  while (!CPU_ISSET(first, &guard.original())) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const auto r = testing::run_kiln({"devices"});  // the child inherits the one-CPU mask
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  cpus      1 usable of "), std::string::npos) << r.out;
}

TEST(DevicesCommand, CacheSizesAreSysfsFigures) {
  const std::filesystem::path index = "/sys/devices/system/cpu/cpu0/cache/index0";
  if (!std::filesystem::exists(index / "size")) GTEST_SKIP() << "no cache description in sysfs";
  std::string level, type, size;
  std::ifstream(index / "level") >> level;
  std::ifstream(index / "type") >> type;
  std::ifstream(index / "size") >> size;  // e.g. "32K"
  ASSERT_FALSE(size.empty());
  const std::uint64_t kib = std::stoull(size.substr(0, size.size() - 1)) << (size.back() == 'M' ? 10 : 0);
  const std::string shown = kib >= 1024 ? fmt::format("{} MiB", kib >> 10) : fmt::format("{} KiB", kib);
  const auto r = testing::run_kiln({"devices"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(fmt::format("  cache     L{} {:<11} {:>8}", level, type, shown)), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kiln
