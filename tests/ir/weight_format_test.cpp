// Oracles: hand-packed bytes for the canonical layouts (nibble order, flat packing across rows,
// zero-point packing), NNCF's scale formulas worked out by hand, and the RTN error bound
// |w - dequant(quant(w))| <= |scale| / 2 for every element inside the scheme's range.
#include "ir/weight_format.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>

#include "support/test_support.hpp"
#include "util/half.hpp"

namespace kiln {
namespace {

std::vector<float> random_weights(std::size_t count, unsigned seed, float stddev = 0.02f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> w(count);
  for (float& x : w) x = dist(rng);
  return w;
}

TEST(WeightFormat, SchemeNamesRoundTrip) {
  for (WeightScheme s : kAllWeightSchemes) EXPECT_EQ(parse_weight_scheme(weight_scheme_name(s)), s);
  EXPECT_EQ(weight_scheme_name(WeightScheme::kInt4Sym), "int4_sym");
  EXPECT_KILN_ERROR(parse_weight_scheme("int3"), "int3", "int4_sym", "nf4");
}

// optimum-cli's names: int4 and int8 are the asymmetric schemes until --sym; every scheme's
// family name parses back to that family's asymmetric member (or the scheme itself).
TEST(WeightFormat, OptimumNamesAndSym) {
  EXPECT_EQ(parse_optimum_weight_format("int4"), WeightScheme::kInt4Asym);
  EXPECT_EQ(parse_optimum_weight_format("int8"), WeightScheme::kInt8Asym);
  EXPECT_EQ(parse_optimum_weight_format("fp16"), WeightScheme::kF16);
  EXPECT_EQ(parse_optimum_weight_format("int4_sym"), std::nullopt);
  EXPECT_EQ(parse_optimum_weight_format("f16"), std::nullopt);
  for (WeightScheme s : kAllWeightSchemes) {
    const WeightScheme family = *parse_optimum_weight_format(optimum_weight_format_name(s));
    EXPECT_EQ(with_sym(family) == s || family == s, true) << weight_scheme_name(s);
  }
  EXPECT_EQ(with_sym(WeightScheme::kInt4Asym), WeightScheme::kInt4Sym);
  EXPECT_EQ(with_sym(WeightScheme::kInt8Asym), WeightScheme::kInt8Sym);
  EXPECT_EQ(with_sym(WeightScheme::kNf4), WeightScheme::kNf4);
  EXPECT_EQ(with_sym(WeightScheme::kF16), WeightScheme::kF16);
}

TEST(WeightFormat, ByteSizes) {
  EXPECT_EQ(weight_data_bytes(WeightScheme::kF32, 3, 5), 60u);
  EXPECT_EQ(weight_data_bytes(WeightScheme::kBf16, 3, 5), 30u);
  EXPECT_EQ(weight_data_bytes(WeightScheme::kInt8Asym, 3, 5), 15u);
  EXPECT_EQ(weight_data_bytes(WeightScheme::kInt4Sym, 3, 5), 8u);          // 15 nibbles
  EXPECT_EQ(scale_bytes(WeightScheme::kInt4Sym, 3, 100, 32), 3u * 4 * 2);  // ceil(100/32) = 4
  EXPECT_EQ(scale_bytes(WeightScheme::kF16, 3, 100, 100), 0u);
  EXPECT_EQ(zero_point_bytes(WeightScheme::kInt4Asym, 3, 100, 32), 6u);
  EXPECT_EQ(zero_point_bytes(WeightScheme::kInt8Asym, 3, 100, 32), 12u);
  EXPECT_EQ(zero_point_bytes(WeightScheme::kInt4Sym, 3, 100, 32), 0u);
}

// Hand-worked NNCF sym: |min| = 1 >= max = 0.875, so scale = 1/8 and codes are -8, 4, 0, 7,
// stored as nibbles 0x8, 0x4, 0x0, 0x7 with the even index low.
TEST(WeightFormat, Int4SymPacksByHand) {
  const std::vector<float> w = {-1.0f, 0.5f, 0.0f, 0.875f};
  const QuantizedMatrix m = quantize_weights(w, 1, 4, WeightScheme::kInt4Sym, 4, "t");
  EXPECT_EQ(m.data(), (std::vector<std::uint8_t>{0x48, 0x70}));
  EXPECT_EQ(m.scales(), (std::vector<std::uint16_t>{f32_to_f16(0.125f)}));
  EXPECT_TRUE(m.zero_points().empty());
}

// When the positive extreme is larger the NNCF scale is negative: max = 1 maps to code -8.
TEST(WeightFormat, Int4SymNegativeScaleUsesFullRange) {
  const std::vector<float> w = {-0.5f, 1.0f};
  const QuantizedMatrix m = quantize_weights(w, 1, 2, WeightScheme::kInt4Sym, 2, "t");
  EXPECT_EQ(f16_to_f32(m.scales()[0]), -0.125f);
  EXPECT_EQ(read_code(m.view(), 0, 0), 4);
  EXPECT_EQ(read_code(m.view(), 0, 1), -8);
  EXPECT_EQ(dequantize_weights(m.view()), w);
}

// Odd `in`: the flat index runs across rows, so row 1 of a [3, 3] int4 matrix starts in the high
// nibble of byte 1; zero points of a [3, 1]-group matrix pack the same way.
TEST(WeightFormat, Int4AsymPacksFlatAcrossRows) {
  QuantizedMatrix m(WeightScheme::kInt4Asym, 3, 3, 3);
  int code = 1;
  for (std::size_t r = 0; r < 3; ++r) {
    for (std::size_t c = 0; c < 3; ++c) m.set_code(r, c, code++);  // codes 1..9
    m.set_params(r, 0, QuantParams{0.5f, static_cast<int>(r) + 10});
  }
  EXPECT_EQ(m.data(), (std::vector<std::uint8_t>{0x21, 0x43, 0x65, 0x87, 0x09}));
  EXPECT_EQ(m.zero_points(), (std::vector<std::uint8_t>{0xba, 0x0c}));
  EXPECT_EQ(read_code(m.view(), 1, 0), 4);
  EXPECT_EQ(read_params(m.view(), 2, 0).zero_point, 12);
  std::vector<float> row(3);
  dequantize_row(m.view(), 1, row);
  EXPECT_EQ(row, (std::vector<float>{(4 - 11) * 0.5f, (5 - 11) * 0.5f, (6 - 11) * 0.5f}));
}

// Hand-worked asym: min = -1, max = 2 -> scale = 3/255, zp = round(1 / scale) = 85.
TEST(WeightFormat, Int8AsymParamsByHand) {
  const std::vector<float> w = {-1.0f, 2.0f, 0.0f, 0.5f};
  const QuantizedMatrix m = quantize_weights(w, 1, 4, WeightScheme::kInt8Asym, 4, "t");
  const QuantParams p = read_params(m.view(), 0, 0);
  EXPECT_EQ(p.scale, f16_to_f32(f32_to_f16(3.0f / 255.0f)));
  EXPECT_EQ(p.zero_point, 85);
  EXPECT_EQ(read_code(m.view(), 0, 2), 85);  // zero is exact
  EXPECT_EQ(read_code(m.view(), 0, 1), 255);
}

TEST(WeightFormat, Int8SymStoresTwosComplement) {
  const std::vector<float> w = {-1.0f, 0.5f};
  const QuantizedMatrix m = quantize_weights(w, 1, 2, WeightScheme::kInt8Sym, 2, "t");
  EXPECT_EQ(m.data()[0], 0x80);  // -128
  EXPECT_EQ(m.data()[1], 64);
  EXPECT_EQ(read_code(m.view(), 0, 0), -128);
}

// Every level times the scale maps back to its own index; a midpoint goes to the lower level
// (NNCF's searchsorted over the level centres).
TEST(WeightFormat, Nf4LevelsAndTies) {
  const QuantParams p{2.0f, 0};
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(quantize_value(WeightScheme::kNf4, kNf4Levels[i] * 2.0f, p), i);
    EXPECT_EQ(dequantize_value(WeightScheme::kNf4, i, p), kNf4Levels[i] * 2.0f);
  }
  const float centre = (kNf4Levels[7] + kNf4Levels[8]) / 2.0f;
  EXPECT_EQ(quantize_value(WeightScheme::kNf4, centre * 2.0f, p), 7);
  EXPECT_EQ(quantize_value(WeightScheme::kNf4, -5.0f, p), 0);
  EXPECT_EQ(quantize_value(WeightScheme::kNf4, 5.0f, p), 15);
}

struct BoundCase {
  WeightScheme scheme;
  std::size_t in;
  std::size_t group;
};

class RtnErrorBound : public ::testing::TestWithParam<BoundCase> {};

// Inside the scheme's range every element is within |scale| / 2 of its weight (RTN); the sym
// schemes may clip their smaller-magnitude extreme to the top code, which costs at most |scale|.
// nf4's bound is half the widest gap between adjacent levels (0.1519) times the scale.
TEST_P(RtnErrorBound, HoldsForEveryElement) {
  const BoundCase c = GetParam();
  const std::size_t out = 7;
  const std::vector<float> w = random_weights(out * c.in, 42 + c.in);
  const QuantizedMatrix m = quantize_weights(w, out, c.in, c.scheme, c.group, "t");
  const std::vector<float> d = dequantize_weights(m.view());
  double max_err_over_scale = 0.0;
  for (std::size_t r = 0; r < out; ++r) {
    for (std::size_t col = 0; col < c.in; ++col) {
      const QuantParams p = read_params(m.view(), r, col / c.group);
      const float err = std::fabs(w[r * c.in + col] - d[r * c.in + col]);
      const float s = std::fabs(p.scale);
      if (c.scheme == WeightScheme::kNf4) {
        EXPECT_LE(err, 0.1519f * s * 1.0001f) << r << "," << col;
        continue;
      }
      const int code = read_code(m.view(), r, col);
      const bool clipped = code == min_code(c.scheme) || code == max_code(c.scheme);
      EXPECT_LE(err, (clipped ? 1.0f : 0.5f) * s * 1.0001f + 1e-9f) << r << "," << col;
      max_err_over_scale = std::max(max_err_over_scale, double(err / s));
    }
  }
  if (c.scheme != WeightScheme::kNf4) {
    EXPECT_GT(max_err_over_scale, 0.3);  // the bound is tight
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, RtnErrorBound,
    ::testing::Values(BoundCase{WeightScheme::kInt4Sym, 256, 32}, BoundCase{WeightScheme::kInt4Sym, 200, 64},
                      BoundCase{WeightScheme::kInt4Asym, 256, 128}, BoundCase{WeightScheme::kInt4Asym, 77, 77},
                      BoundCase{WeightScheme::kInt8Sym, 300, 128}, BoundCase{WeightScheme::kInt8Asym, 129, 129},
                      BoundCase{WeightScheme::kNf4, 256, 64}, BoundCase{WeightScheme::kNf4, 70, 32}));

// Edge cases: an all-zero group dequantises to exact zeros (scale becomes FLT_EPSILON); a
// constant negative group is exact under sym (it is the extreme that maps to -8); a constant
// positive group clips to code 7 (NNCF's tie rule picks the positive scale), error = |scale|;
// asym constant groups stay within scale / 2 because the range is widened to include 0.
TEST(WeightFormat, DegenerateGroups) {
  const std::vector<float> zeros(32, 0.0f);
  for (WeightScheme s : {WeightScheme::kInt4Sym, WeightScheme::kInt4Asym, WeightScheme::kInt8Sym,
                         WeightScheme::kInt8Asym, WeightScheme::kNf4}) {
    const QuantizedMatrix m = quantize_weights(zeros, 1, 32, s, 32, "zeros");
    EXPECT_EQ(dequantize_weights(m.view()), zeros) << weight_scheme_name(s);
    EXPECT_EQ(read_params(m.view(), 0, 0).scale, f16_to_f32(f32_to_f16(FLT_EPSILON)));
  }
  const std::vector<float> neg(32, -0.3f);
  const QuantizedMatrix mn = quantize_weights(neg, 1, 32, WeightScheme::kInt4Sym, 32, "neg");
  for (float v : dequantize_weights(mn.view())) EXPECT_NEAR(v, -0.3f, 0.3f * 1e-3f);
  const std::vector<float> pos(32, 0.3f);
  const QuantizedMatrix mp = quantize_weights(pos, 1, 32, WeightScheme::kInt4Sym, 32, "pos");
  EXPECT_EQ(read_code(mp.view(), 0, 5), 7);
  for (WeightScheme s : {WeightScheme::kInt4Asym, WeightScheme::kInt8Asym}) {
    const QuantizedMatrix ma = quantize_weights(pos, 1, 32, s, 32, "pos");
    const float scale = read_params(ma.view(), 0, 0).scale;
    for (float v : dequantize_weights(ma.view())) EXPECT_NEAR(v, 0.3f, scale / 2);
  }
}

// Extremes within f16's range quantise; beyond it the error names the tensor, row and group.
TEST(WeightFormat, ExtremeValues) {
  std::vector<float> w(64, 0.0f);
  w[3] = 60000.0f * 8;  // scale -60000: representable in f16, and the extreme maps to -8 exactly
  w[40] = -1e-30f;      // a scale below FLT_EPSILON: the group's codes are all 0
  const QuantizedMatrix m = quantize_weights(w, 2, 32, WeightScheme::kInt4Sym, 32, "big");
  EXPECT_EQ(dequantize_weights(m.view())[3], 480000.0f);
  EXPECT_EQ(dequantize_weights(m.view())[40], 0.0f);
  std::vector<float> huge(64, 0.0f);
  huge[40] = 1e6f;
  EXPECT_KILN_ERROR(quantize_weights(huge, 2, 32, WeightScheme::kInt4Sym, 32, "huge"), "huge", "row 1", "group 0",
                    "f16");
  std::vector<float> nan(64, 0.0f);
  nan[1] = std::nanf("");
  EXPECT_KILN_ERROR(quantize_weights(nan, 2, 32, WeightScheme::kInt8Asym, 32, "nan"), "nan", "not finite");
  EXPECT_KILN_ERROR(quantize_weights(nan, 2, 32, WeightScheme::kF16, 32, "nanf"), "nanf", "[0, 1]");
  std::vector<float> big16(4, 1e5f);
  EXPECT_KILN_ERROR(quantize_weights(big16, 2, 2, WeightScheme::kF16, 2, "b"), "'b'", "f16 range");
}

// rtn_params finds a group's range 4 lanes at a time: oracle, NNCF's formulas over a plain
// scalar min / max, for every group length 1..19 (vector part, tail, both) with the extremes and
// a non-finite weight at every position.
TEST(WeightFormat, RtnParamsMatchAScalarRangeAtEveryPosition) {
  const auto scalar_params = [](WeightScheme s, const std::vector<float>& g) {
    float lo = g[0], hi = g[0];
    for (float w : g) {
      lo = std::min(lo, w);
      hi = std::max(hi, w);
    }
    QuantParams p;
    if (s == WeightScheme::kInt4Sym) {
      p.scale = f16_to_f32(f32_to_f16((std::fabs(lo) >= hi ? std::fabs(lo) : -hi) / 8.0f));
    } else {  // int8 asym
      lo = std::min(lo, 0.0f);
      hi = std::max(hi, 0.0f);
      p.scale = f16_to_f32(f32_to_f16((hi - lo) / 255.0f));
      p.zero_point = static_cast<int>(std::clamp(-std::nearbyint(lo / p.scale), 0.0f, 255.0f));
    }
    return p;
  };
  for (std::size_t n = 1; n < 20; ++n) {
    for (std::size_t at = 0; at < n; ++at) {
      std::vector<float> g = random_weights(n, static_cast<unsigned>(n * 31 + at));
      for (float& w : g) w = std::fabs(w) + 0.01f;
      for (WeightScheme s : {WeightScheme::kInt4Sym, WeightScheme::kInt8Asym}) {
        for (float extreme : {-1.0f, 1.0f}) {
          std::vector<float> h = g;
          h[at] = extreme;
          const QuantParams got = rtn_params(s, h), want = scalar_params(s, h);
          EXPECT_EQ(got.scale, want.scale) << "length " << n << " extreme " << extreme << " at " << at;
          EXPECT_EQ(got.zero_point, want.zero_point) << "length " << n << " at " << at;
        }
        for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
          std::vector<float> h = g;
          h[at] = bad;
          EXPECT_KILN_ERROR(rtn_params(s, h), "not finite");
        }
      }
    }
  }
}

TEST(WeightFormat, RejectsBadShapes) {
  const std::vector<float> w(12, 0.0f);
  EXPECT_KILN_ERROR(quantize_weights(w, 3, 4, WeightScheme::kInt4Sym, 5, "g"), "'g'", "group size 5", "1..4");
  EXPECT_KILN_ERROR(quantize_weights(w, 3, 4, WeightScheme::kInt4Sym, 0, "g"), "group size 0");
  EXPECT_KILN_ERROR(quantize_weights(w, 4, 4, WeightScheme::kInt8Sym, 4, "n"), "'n'", "12 values", "[4, 4]");
  WeightView v{WeightScheme::kInt4Asym, 3, 4, 4, nullptr, nullptr, nullptr};
  EXPECT_KILN_ERROR(validate_weight_view(v, "v"), "'v'", "data");
}

// Float schemes store values: f32 exactly, f16 / bf16 rounded to nearest even.
TEST(WeightFormat, FloatSchemesConvert) {
  const std::vector<float> w = random_weights(6 * 10, 7, 1.0f);
  for (WeightScheme s : {WeightScheme::kF32, WeightScheme::kF16, WeightScheme::kBf16}) {
    const QuantizedMatrix m = quantize_weights(w, 6, 10, s, 0, "f");
    const std::vector<float> d = dequantize_weights(m.view());
    for (std::size_t i = 0; i < w.size(); ++i) {
      const float expect = s == WeightScheme::kF32   ? w[i]
                           : s == WeightScheme::kF16 ? f16_to_f32(f32_to_f16(w[i]))
                                                     : bf16_to_f32(f32_to_bf16(w[i]));
      EXPECT_EQ(d[i], expect);
    }
  }
}

}  // namespace
}  // namespace kiln
