// Oracle: every matmul kernel equals its scalar reference twin (kernels/reference) within f32
// rounding (matmul_test_util.hpp), for every ISA this CPU runs, on odd shapes: one output row,
// rows not a multiple of the tile, `in` not a multiple of the group, per-channel groups, n = 1, 3,
// 17, 64 activation rows, split row ranges, a y stride wider than out, with and without bias.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernels/matmul.hpp"
#include "kernels/reference/matmul.hpp"
#include "matmul_test_util.hpp"
#include "support/test_support.hpp"
#include "util/half.hpp"

namespace kiln::kernels {
namespace {

using testing::all_isas;
using testing::random_matrix;

struct Shape {
  std::size_t out, in, group, act_group;
};

constexpr Shape kShapes[] = {
    {1, 32, 32, 32},     // one row, one group
    {37, 100, 32, 32},   // ragged last group (4 columns), rows not a multiple of 8 or 16
    {33, 200, 64, 128},  // activation groups span two weight groups; in % 64 != 0
    {50, 256, 128, 32},  // weight groups span four activation groups
    {16, 96, 96, 32},    // per-channel weights, in not a multiple of 64
    {70, 160, 32, 160},  // per-row activation scale
};
constexpr std::size_t kRowCounts[] = {1, 3, 17, 64};
constexpr float kSentinel = -12345.0f;

struct Case {
  Isa isa;
  WeightScheme scheme;
  ActivationMode mode;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::string(isa_name(info.param.isa)) + "_" + std::string(weight_scheme_name(info.param.scheme)) +
                     "_x_" + std::string(activation_mode_name(info.param.mode));
  return name;
}

class MatmulVsReference : public ::testing::TestWithParam<Case> {};

// Runs the kernel over rows [0, split) and [split, out) (two "threads") and checks every output
// against the twin, and that columns beyond out in each y row stay untouched.
void check_shape(const Case& c, const Shape& s, std::size_t n, bool with_bias) {
  const std::size_t group = is_float_scheme(c.scheme) ? s.in : s.group;
  const std::vector<float> w = random_matrix(s.out, s.in, 11 + s.in, 0.05f);
  const QuantizedMatrix canonical = quantize_weights(w, s.out, s.in, c.scheme, group, "w");
  const PackedMatrix packed = pack_weights(canonical.view(), c.isa, "w");
  const MatmulKernels kernels = find_matmul_kernels(c.isa, c.scheme, c.mode);

  std::vector<float> x = random_matrix(n, s.in, 7 + n);
  if (n >= 3) std::fill(x.begin() + s.in, x.begin() + 2 * s.in, 0.0f);  // an all-zero row
  const std::vector<float> bias = random_matrix(1, s.out, 5);
  const float* b = with_bias ? bias.data() : nullptr;
  const std::size_t y_stride = s.out + 3;

  ActivationBuffer act(n, s.in, s.act_group);
  const QuantizedActivations xq = act.view(n);
  if (c.mode == ActivationMode::kInt8) {
    check_activation_groups(packed.layout(), s.act_group, "w");
    find_quantize_activations(c.isa)(x.data(), xq, 0, n);
  }

  // The twin and the magnitude Σ|w·x| of each output, from the canonical matrix.
  std::vector<float> want(n * y_stride);
  std::vector<double> magnitude(n * s.out, 0.0);
  const std::vector<float> wd = dequantize_weights(canonical.view());
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t r = 0; r < s.out; ++r) {
      for (std::size_t k = 0; k < s.in; ++k) {
        float xv = x[i * s.in + k];
        if (c.mode == ActivationMode::kInt8) {
          xv = xq.codes[i * xq.row_stride + k] * xq.scales[i * xq.groups + k / s.act_group];
        }
        magnitude[i * s.out + r] += std::fabs(double(wd[r * s.in + k]) * xv);
      }
      magnitude[i * s.out + r] += with_bias ? std::fabs(bias[r]) : 0.0;
    }
  }
  if (c.mode == ActivationMode::kInt8) {
    const PackedLayout scalar = packed_layout(Isa::kScalar, c.scheme, s.out, s.in, group);
    reference::matmul_int8_activations(canonical.view(), xq, int8_block_columns(scalar, s.act_group), b, want.data(),
                                       y_stride, 0, s.out);
  } else {
    reference::matmul_f32_activations(canonical.view(), x.data(), n, b, want.data(), y_stride, 0, s.out);
  }

  for (MatmulFn fn : {kernels.gemv, kernels.gemm}) {
    std::vector<float> y(n * y_stride, kSentinel);
    MatmulArgs args{n, x.data(), &xq, y.data(), y_stride, b};
    const std::size_t split = std::min<std::size_t>(s.out, 19);  // mid-tile for 8 and 16 rows
    fn(packed.view(), args, 0, split);
    fn(packed.view(), args, split, s.out);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t r = 0; r < s.out; ++r) {
        std::ostringstream where;
        where << "out " << s.out << " in " << s.in << " group " << group << " n " << n << " row " << i << " col " << r
              << (fn == kernels.gemv ? " gemv" : " gemm");
        testing::expect_close(y[i * y_stride + r], want[i * y_stride + r], magnitude[i * s.out + r], where.str());
      }
      for (std::size_t r = s.out; r < y_stride; ++r) ASSERT_EQ(y[i * y_stride + r], kSentinel);
    }
  }
}

TEST_P(MatmulVsReference, OddShapes) {
  const Case c = GetParam();
  KILN_SKIP_UNLESS_SUPPORTED(c.isa);
  bool with_bias = false;
  for (const Shape& s : kShapes) {
    for (std::size_t n : kRowCounts) {
      check_shape(c, s, n, with_bias);
      with_bias = !with_bias;
      if (HasFatalFailure() || HasNonfatalFailure()) return;  // one shape's report is enough
    }
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (Isa isa : all_isas()) {
    for (WeightScheme s : kAllWeightSchemes) {
      cases.push_back({isa, s, ActivationMode::kF32});
      if (is_integer_scheme(s)) cases.push_back({isa, s, ActivationMode::kInt8});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Kernels, MatmulVsReference, ::testing::ValuesIn(all_cases()), case_name);

// The AVX-512 bf16 kernel blocks 4 weight tiles x 6 activation rows over k-blocks of 512 columns
// and row blocks of 48 (matmul_bf16_avx512.cpp); these shapes cross each of those edges: a
// ragged odd last k-block, 1-3 tile remainders, 1-5 row remainders, rows past one row block.
TEST(MatmulBf16, BlockEdgesVsReference) {
  constexpr Shape kBlockShapes[] = {{150, 1101, 1101, 32}, {64, 1024, 1024, 32}};
  constexpr std::size_t kBlockRowCounts[] = {1, 2, 5, 6, 7, 13, 48, 49, 101};
  for (Isa isa : all_isas()) {
    if (!isa_supported(isa)) continue;
    bool with_bias = true;
    for (const Shape& s : kBlockShapes) {
      for (std::size_t n : kBlockRowCounts) {
        check_shape({isa, WeightScheme::kBf16, ActivationMode::kF32}, s, n, with_bias);
        with_bias = !with_bias;
        if (HasFatalFailure() || HasNonfatalFailure()) return;
      }
    }
  }
}

// int32 lanes may wrap inside a block, but the block's exact Σ (code - zp) · q must fit: a row
// of 70000 int8_asym codes 255 (zp 0) × activation codes 127 sums to 2.27e9 > 2^31, so the
// kernels must split the whole-row block (int8_block_columns).
TEST(MatmulLimits, LongRowsDoNotOverflowInt32) {
  const std::size_t out = 3, in = 70000;
  const std::vector<float> w(out * in, 1.0f);  // int8_asym: scale 1/255, zp 0, codes 255
  const QuantizedMatrix canonical = quantize_weights(w, out, in, WeightScheme::kInt8Asym, in, "long");
  ASSERT_EQ(read_code(canonical.view(), 0, 0) - read_params(canonical.view(), 0, 0).zero_point, 255);
  const std::vector<float> x(in, 2.0f);  // every activation code 127
  ActivationBuffer act(1, in, in);
  const QuantizedActivations xq = act.view(1);
  quantize_activations_reference(x.data(), xq, 0, 1);
  const float want = 2.0f * in * (255 * f16_to_f32(f32_to_f16(1.0f / 255)));
  for (Isa isa : all_isas()) {
    if (!isa_supported(isa)) continue;
    const PackedMatrix packed = pack_weights(canonical.view(), isa, "long");
    const MatmulKernels k = find_matmul_kernels(isa, WeightScheme::kInt8Asym, ActivationMode::kInt8);
    for (MatmulFn fn : {k.gemv, k.gemm}) {
      std::vector<float> y(out);
      MatmulArgs args{1, x.data(), &xq, y.data(), out, nullptr};
      fn(packed.view(), args, 0, out);
      for (float v : y) EXPECT_NEAR(v, want, want * 1e-6) << isa_name(isa);
    }
  }
}

TEST(MatmulLookup, UnsupportedCombinationsNameWhatIsAccepted) {
  EXPECT_KILN_ERROR(find_matmul_kernels(Isa::kScalar, WeightScheme::kNf4, ActivationMode::kInt8), "nf4",
                    "int8 activations", "int4_sym");
  const QuantizedMatrix m = quantize_weights(random_matrix(4, 192, 1), 4, 192, WeightScheme::kInt4Sym, 64, "w");
  const PackedMatrix p = pack_weights(m.view(), Isa::kScalar, "w");
  EXPECT_KILN_ERROR(check_activation_groups(p.layout(), 96, "layer.q"), "layer.q", "96", "64", "nest");
  EXPECT_KILN_ERROR(check_activation_groups(p.layout(), 48, "layer.q"), "48", "multiple of 32");
  if (detected_isa() != Isa::kAmx) {
    EXPECT_KILN_ERROR(find_matmul_kernels(Isa::kAmx, WeightScheme::kInt4Sym, ActivationMode::kInt8), "amx",
                      "not supported");
  }
}

TEST(MatmulLookup, ArgumentChecksNameTheMismatch) {
  const QuantizedMatrix m = quantize_weights(random_matrix(4, 64, 1), 4, 64, WeightScheme::kInt4Sym, 32, "w");
  const PackedMatrix p = pack_weights(m.view(), Isa::kScalar, "w");
  std::vector<float> x(64), y(8);
  ActivationBuffer narrow(1, 32, 32), fine(1, 64, 32);
  const QuantizedActivations qn = narrow.view(1), qf = fine.view(1);
  MatmulArgs a{1, x.data(), &qf, y.data(), 4, nullptr};
  EXPECT_NO_THROW(check_matmul_args(p.view(), a, ActivationMode::kInt8, "l.q"));
  a.y_stride = 3;
  EXPECT_KILN_ERROR(check_matmul_args(p.view(), a, ActivationMode::kInt8, "l.q"), "'l.q'", "stride 3");
  a.y_stride = 4;
  a.xq = &qn;
  EXPECT_KILN_ERROR(check_matmul_args(p.view(), a, ActivationMode::kInt8, "l.q"), "32 wide", "64");
  a.n = 2;
  a.xq = &qf;
  EXPECT_KILN_ERROR(check_matmul_args(p.view(), a, ActivationMode::kInt8, "l.q"), "2 rows");
  a.x = nullptr;
  EXPECT_KILN_ERROR(check_matmul_args(p.view(), a, ActivationMode::kF32, "l.q"), "f32 activations");
}

// The x86 layouts need weight groups that are multiples of 32 (or per-channel).
TEST(MatmulLookup, X86LayoutsRejectOddGroups) {
  const QuantizedMatrix m = quantize_weights(random_matrix(4, 48, 1), 4, 48, WeightScheme::kInt8Sym, 16, "odd");
  EXPECT_KILN_ERROR(pack_weights(m.view(), Isa::kAvx2, "odd"), "'odd'", "group size 16", "multiples of 32");
  EXPECT_NO_THROW(pack_weights(m.view(), Isa::kScalar, "odd"));
}

}  // namespace
}  // namespace kiln::kernels
