// Oracles: the closed forms of HF's RoPE initialisers (default θ^(-2i/d); linear divides by
// the factor; llama3 keeps high frequencies, divides low ones, blends the band between), and
// the rotation's identities (it preserves norms; position 0 is the identity).
#include "models/rope.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kernels/reference/elementwise.hpp"

namespace kiln::models {
namespace {

ir::ModelConfig config_with(ir::RopeScaling scaling, double theta = 500000.0, std::int64_t head_dim = 64) {
  ir::ModelConfig c;
  c.head_dim = head_dim;
  c.rope_theta = theta;
  c.rope_scaling = scaling;
  return c;
}

TEST(Rope, DefaultFrequencies) {
  const auto f = rope_inverse_frequencies(config_with({}, 10000.0, 8));
  ASSERT_EQ(f.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(f[i], std::pow(10000.0, -2.0 * i / 8));
}

TEST(Rope, LinearDividesByFactor) {
  ir::RopeScaling s;
  s.type = ir::RopeScalingType::kLinear;
  s.factor = 4.0;
  const auto plain = rope_inverse_frequencies(config_with({}));
  const auto scaled = rope_inverse_frequencies(config_with(s));
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_DOUBLE_EQ(scaled[i], plain[i] / 4.0);
}

TEST(Rope, Llama3BandsMatchTheirDefinition) {
  ir::RopeScaling s{ir::RopeScalingType::kLlama3, 8.0, 1.0, 4.0, 8192};
  const auto plain = rope_inverse_frequencies(config_with({}));
  const auto scaled = rope_inverse_frequencies(config_with(s));
  int high = 0, low = 0, band = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    const double wavelen = 2 * std::numbers::pi / plain[i];
    if (wavelen < 8192.0 / 4.0) {
      EXPECT_DOUBLE_EQ(scaled[i], plain[i]);
      ++high;
    } else if (wavelen > 8192.0) {
      EXPECT_DOUBLE_EQ(scaled[i], plain[i] / 8.0);
      ++low;
    } else {
      EXPECT_LT(scaled[i], plain[i]);
      EXPECT_GT(scaled[i], plain[i] / 8.0);
      ++band;
    }
  }
  EXPECT_GT(high, 0);
  EXPECT_GT(low, 0);
  EXPECT_GT(band, 0);
}

TEST(Rope, RotationPreservesNormsAndPositionZeroIsIdentity) {
  const auto inv_freq = rope_inverse_frequencies(config_with({}, 10000.0, 16));
  const std::vector<std::int64_t> positions{0, 7, 1000};
  std::vector<float> cos(3 * 8), sin(3 * 8);
  fill_rotary_table(inv_freq, positions, cos.data(), sin.data());
  std::vector<float> x(3 * 2 * 16);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i)) + 0.1f;
  std::vector<float> rotated = x;
  kernels::reference::rope_rotate_half(rotated.data(), 3, 2, 16, cos.data(), sin.data());
  for (int row = 0; row < 3; ++row) {
    for (int h = 0; h < 2; ++h) {
      double n0 = 0, n1 = 0;
      for (int i = 0; i < 16; ++i) {
        const std::size_t k = (row * 2 + h) * 16 + i;
        n0 += x[k] * x[k];
        n1 += rotated[k] * rotated[k];
        if (row == 0) {
          EXPECT_FLOAT_EQ(rotated[k], x[k]);
        }
      }
      EXPECT_NEAR(n0, n1, 1e-4);
    }
  }
}

}  // namespace
}  // namespace kiln::models
