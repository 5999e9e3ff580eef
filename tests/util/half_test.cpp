// Oracle: the f16/bf16 conversions round to the nearest representable value, ties to even,
// and every finite 16-bit value survives a round trip through f32 unchanged.
#include "util/half.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace kiln {
namespace {

TEST(Half, EveryF16RoundTripsThroughF32) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(f32_to_f16(f), h) << "f16 bits " << h;
  }
}

TEST(Half, EveryBf16RoundTripsThroughF32) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(f32_to_bf16(f), h) << "bf16 bits " << h;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);                 // rounds up past the largest finite value
  EXPECT_EQ(f32_to_f16(5.9604644775390625e-8f), 0x0001);   // smallest subnormal
  EXPECT_EQ(f32_to_f16(2.98023223876953125e-8f), 0x0000);  // half of it: tie → even (0)
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(NAN))));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

// The result is never farther from x than either neighbour of the chosen value.
template <typename ToBits, typename FromBits>
void expect_nearest(float x, ToBits to_bits, FromBits from_bits) {
  const std::uint16_t r = to_bits(x);
  const float rf = from_bits(r);
  if (std::isinf(rf)) return;
  const double err = std::fabs(double(x) - rf);
  for (int delta : {-1, 1}) {
    const std::uint16_t n = static_cast<std::uint16_t>(r + delta);
    const float nf = from_bits(n);
    if (std::isnan(nf) || std::isinf(nf) || (std::signbit(nf) != std::signbit(rf) && rf != 0)) continue;
    const double nerr = std::fabs(double(x) - nf);
    EXPECT_LE(err, nerr) << "x=" << x;
    if (err == nerr) {
      EXPECT_EQ(r & 1, 0) << "tie not to even, x=" << x;
    }
  }
}

TEST(Half, RandomFloatsRoundToNearest) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-26.0f, 17.0f);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  for (int i = 0; i < 200000; ++i) {
    float x = std::ldexp(mantissa(rng), static_cast<int>(exponent(rng)));
    if (i & 1) x = -x;
    expect_nearest(x, f32_to_f16, f16_to_f32);
    expect_nearest(x, f32_to_bf16, bf16_to_f32);
  }
}

}  // namespace
}  // namespace kiln
