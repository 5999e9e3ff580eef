// Scalar conversions between f32 and the 16-bit float formats (IEEE f16, bfloat16). These are
// the reference conversions: vector kernels must agree with them bit for bit.
#pragma once

#include <bit>
#include <cstdint>

namespace kiln {

inline float bf16_to_f32(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t{h} << 16); }

// Round to nearest even, as PyTorch does; NaN stays NaN.
inline std::uint16_t f32_to_bf16(float f) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

inline float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    // Subnormal f16: value = mant * 2^-24.
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Round to nearest even; overflow goes to infinity, as the hardware conversion does.
inline std::uint16_t f32_to_f16(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow → inf
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: scale so the f16 subnormal unit becomes an integer.
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // 2^24
    // Round half to even via the FPU's default rounding on float → int through nearbyint rules.
    std::uint32_t q = static_cast<std::uint32_t>(scaled);
    const float rem = scaled - static_cast<float>(q);
    if (rem > 0.5f || (rem == 0.5f && (q & 1u))) ++q;
    return static_cast<std::uint16_t>(sign | q);
  }
  std::uint32_t v = abs - 0x38000000u;  // rebias exponent 127 → 15
  v += 0xfffu + ((v >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (v >> 13));
}

}  // namespace kiln
