// Oracles: the kernel's own view of the CPU (/proc/cpuinfo flags) for detection, and the level
// ordering for selection.
#include "kernels/cpu_isa.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "support/test_support.hpp"

namespace kiln {
namespace {

std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(CpuIsa, DetectionAgreesWithProcCpuinfo) {
  const std::set<std::string> flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags line on this system";
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.fma, flags.count("fma") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512bw, flags.count("avx512bw") == 1);
  EXPECT_EQ(f.avx512_vnni, flags.count("avx512_vnni") == 1);
  EXPECT_EQ(f.avx512_bf16, flags.count("avx512_bf16") == 1);
  EXPECT_EQ(f.amx_tile, flags.count("amx_tile") == 1);
  EXPECT_EQ(f.amx_int8, flags.count("amx_int8") == 1);
  std::cout << "detected: " << describe_cpu_features() << "\n";
}

TEST(CpuIsa, LevelsAreOrdered) {
  const Isa detected = detected_isa();
  EXPECT_TRUE(isa_supported(Isa::kScalar));
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
    EXPECT_EQ(isa_supported(isa), isa <= detected) << isa_name(isa);
  }
  EXPECT_EQ(select_isa(), detected);
}

TEST(CpuIsa, NamesRoundTrip) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
    EXPECT_EQ(parse_isa(isa_name(isa)), isa);
  }
  EXPECT_KILN_ERROR(parse_isa("avx1024"), "avx1024", "scalar, avx2, avx512, amx");
}

// A lower level can always be forced; a level above the CPU's is an error naming both.
TEST(CpuIsa, ForcingAboveTheCpuFails) {
  EXPECT_EQ(select_isa(Isa::kScalar), Isa::kScalar);
  if (detected_isa() == Isa::kAmx) GTEST_SKIP() << "this CPU supports every level";
  const std::string detected(isa_name(detected_isa()));
  EXPECT_KILN_ERROR(select_isa(Isa::kAmx), "'amx'", "not supported", detected.c_str());
}

}  // namespace
}  // namespace kiln
