// CPU feature detection and the ISA level that selects kiln's kernels. Detection runs once per
// process; a caller may force a lower level (tests, comparisons) but never a higher one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

// Ordered: each level implies every lower one.
//   kAvx2   = AVX2 + FMA + F16C + BMI2
//   kAvx512 = kAvx2 + AVX-512 F/BW/VL/DQ + VNNI + BF16 (Zen 4, Sapphire Rapids, Cooper Lake).
//             NOTE: Skylake-X and Ice Lake lack AVX512_BF16 and run the AVX2 kernels; one level
//             per kernel set keeps the dispatch table flat.
//   kAmx    = kAvx512 + AMX TILE/INT8/BF16 with the Linux permission to use tile data.
enum class Isa : std::uint8_t { kScalar, kAvx2, kAvx512, kAmx };

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false, bmi2 = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512_vnni = false, avx512_bf16 = false;
  bool amx_tile = false, amx_int8 = false, amx_bf16 = false;
  bool os_avx = false;         // XCR0 enables YMM state
  bool os_avx512 = false;      // XCR0 enables opmask + ZMM state
  bool amx_permitted = false;  // arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) succeeded
};

// What CPUID, XCR0 and the kernel report, detected once (thread-safe).
const CpuFeatures& cpu_features();

// The highest level this CPU and OS support.
Isa detected_isa();

bool isa_supported(Isa isa);

// "scalar", "avx2", "avx512", "amx".
std::string_view isa_name(Isa isa);

// Parses a name above; anything else is a kiln::Error listing the accepted names.
Isa parse_isa(std::string_view name);

// The level kernels should use: `forced` when given (an error if this CPU lacks it, naming the
// detected level), else the detected level.
Isa select_isa(std::optional<Isa> forced = std::nullopt);

// One line for logs and `kiln devices`: "avx512 (avx2 fma f16c avx512f ... amx:no)".
std::string describe_cpu_features();

}  // namespace kiln
