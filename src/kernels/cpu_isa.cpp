// CPUID / XCR0 probing. Everything here is baseline x86-64 code: it must run on any CPU.
#include "kernels/cpu_isa.hpp"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>

#include "util/error.hpp"

namespace kiln {
namespace {

struct CpuidRegs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return CpuidRegs{};
  return r;
}

bool bit(unsigned reg, int index) { return (reg >> index) & 1u; }

std::uint64_t read_xcr0() {
  std::uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (std::uint64_t{hi} << 32) | lo;
}

// Linux keeps AMX tile data disabled per process until it asks (kernel >= 5.16).
bool request_amx_permission() {
  constexpr int kArchGetXcompPerm = 0x1022;
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  unsigned long bitmask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) != 0) return false;
  return (bitmask >> kXfeatureXtiledata) & 1ul;
}

CpuFeatures probe() {
  CpuFeatures f;
  const CpuidRegs leaf0 = cpuid(0, 0);
  const unsigned max_leaf = leaf0.eax;
  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = bit(l1.ecx, 27);
  const std::uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  f.os_avx = (xcr0 & 0x6) == 0x6;                   // SSE + AVX state
  f.os_avx512 = f.os_avx && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA
  f.fma = bit(l1.ecx, 12) && f.os_avx;
  f.f16c = bit(l1.ecx, 29) && f.os_avx;
  if (max_leaf < 7) return f;
  const CpuidRegs l7 = cpuid(7, 0);
  const CpuidRegs l7s1 = cpuid(7, 1);
  f.avx2 = bit(l7.ebx, 5) && f.os_avx;
  f.bmi2 = bit(l7.ebx, 8);
  f.avx512f = bit(l7.ebx, 16) && f.os_avx512;
  f.avx512dq = bit(l7.ebx, 17) && f.os_avx512;
  f.avx512bw = bit(l7.ebx, 30) && f.os_avx512;
  f.avx512vl = bit(l7.ebx, 31) && f.os_avx512;
  f.avx512_vnni = bit(l7.ecx, 11) && f.os_avx512;
  f.avx512_bf16 = bit(l7s1.eax, 5) && f.os_avx512;
  f.amx_bf16 = bit(l7.edx, 22) && os_amx;
  f.amx_tile = bit(l7.edx, 24) && os_amx;
  f.amx_int8 = bit(l7.edx, 25) && os_amx;
  if (f.amx_tile) f.amx_permitted = request_amx_permission();
  return f;
}

bool has_level(const CpuFeatures& f, Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return f.avx2 && f.fma && f.f16c && f.bmi2;
    case Isa::kAvx512:
      return has_level(f, Isa::kAvx2) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512_vnni &&
             f.avx512_bf16;
    case Isa::kAmx: return has_level(f, Isa::kAvx512) && f.amx_tile && f.amx_int8 && f.amx_bf16 && f.amx_permitted;
  }
  return false;
}

constexpr std::array<Isa, 4> kAllIsas = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx};

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = probe();
  return features;
}

Isa detected_isa() {
  Isa best = Isa::kScalar;
  for (Isa isa : kAllIsas) {
    if (has_level(cpu_features(), isa)) best = isa;
  }
  return best;
}

bool isa_supported(Isa isa) { return has_level(cpu_features(), isa); }

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kAmx: return "amx";
  }
  return "unknown";
}

Isa parse_isa(std::string_view name) {
  for (Isa isa : kAllIsas) {
    if (isa_name(isa) == name) return isa;
  }
  fail("unknown ISA '{}' (accepted: scalar, avx2, avx512, amx)", name);
}

Isa select_isa(std::optional<Isa> forced) {
  const Isa detected = detected_isa();
  if (!forced) return detected;
  if (!isa_supported(*forced)) {
    std::string accepted;
    for (Isa isa : kAllIsas) {
      if (!isa_supported(isa)) continue;
      if (!accepted.empty()) accepted += ", ";
      accepted += isa_name(isa);
    }
    fail(ErrorKind::kUnsupported, "ISA '{}' is not supported by this CPU (detected: {}; accepted: {})",
         isa_name(*forced), isa_name(detected), accepted);
  }
  return *forced;
}

std::string describe_cpu_features() {
  const CpuFeatures& f = cpu_features();
  std::string out(isa_name(detected_isa()));
  out += " (";
  const std::pair<const char*, bool> flags[] = {{"avx2", f.avx2},
                                                {"fma", f.fma},
                                                {"f16c", f.f16c},
                                                {"bmi2", f.bmi2},
                                                {"avx512f", f.avx512f},
                                                {"avx512bw", f.avx512bw},
                                                {"avx512vl", f.avx512vl},
                                                {"avx512dq", f.avx512dq},
                                                {"avx512_vnni", f.avx512_vnni},
                                                {"avx512_bf16", f.avx512_bf16},
                                                {"amx_tile", f.amx_tile},
                                                {"amx_int8", f.amx_int8},
                                                {"amx_bf16", f.amx_bf16}};
  bool first = true;
  for (const auto& [name, present] : flags) {
    if (!present) continue;
    if (!first) out += ' ';
    out += name;
    first = false;
  }
  if (f.amx_tile && !f.amx_permitted) out += " amx:not-permitted-by-os";
  out += ')';
  return out;
}

}  // namespace kiln
