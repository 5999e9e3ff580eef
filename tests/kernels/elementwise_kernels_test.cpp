// Oracle: every ISA's element-wise kernels equal their scalar twins in kernels/reference (double
// accumulation) within f32 rounding — RMSNorm and the fused add + RMSNorm to 2e-6 relative,
// SwiGLU to 1e-6 relative (the vector exp), RoPE and add to 1 ulp-level — on lengths that are and
// are not multiples of the vector width (1, 7, 8, 15, 16, 17, 48, 100, 2048, 8192), in place
// and out of place. log_sum_exp agrees with its twin to 5e-6 absolute on those lengths and a 128k
// vocabulary, with masked (-inf) entries; the twin itself meets log Σ_n exp(c) = c + log n.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/elementwise.hpp"
#include "kernels/reference/elementwise.hpp"
#include "matmul_test_util.hpp"

namespace kiln::kernels {
namespace {

using testing::all_isas;
using testing::random_matrix;

constexpr std::size_t kLengths[] = {1, 7, 8, 15, 16, 17, 48, 100, 2048, 8192};

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float relative, const char* what,
                  std::size_t n) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], relative * std::max(1.0f, std::fabs(want[i])))
        << what << " length " << n << " index " << i;
  }
}

class ElementwiseVsTwin : public ::testing::TestWithParam<Isa> {};

TEST_P(ElementwiseVsTwin, RmsNormAndFusedAdd) {
  KILN_SKIP_UNLESS_SUPPORTED(GetParam());
  const ElementwiseKernels k = find_elementwise_kernels(GetParam());
  for (std::size_t n : kLengths) {
    const std::vector<float> x = random_matrix(1, n, 1, 3.0f), gain = random_matrix(1, n, 2, 1.0f);
    const std::vector<float> delta = random_matrix(1, n, 3, 1.0f);
    std::vector<float> got(n), want(n);
    k.rms_norm(x.data(), gain.data(), 1e-5, n, got.data());
    reference::rms_norm(x.data(), gain.data(), 1e-5, 1, static_cast<std::int64_t>(n), want.data());
    expect_close(got, want, 2e-6f, "rms_norm", n);
    std::vector<float> in_place = x;
    k.rms_norm(in_place.data(), gain.data(), 1e-5, n, in_place.data());
    expect_close(in_place, want, 2e-6f, "rms_norm in place", n);

    std::vector<float> residual_got = x, residual_want = x;
    k.add_rms_norm(residual_got.data(), delta.data(), gain.data(), 1e-6, n, got.data());
    reference::add(residual_want.data(), delta.data(), static_cast<std::int64_t>(n));
    reference::rms_norm(residual_want.data(), gain.data(), 1e-6, 1, static_cast<std::int64_t>(n), want.data());
    EXPECT_EQ(residual_got, residual_want) << "the residual add is exact, length " << n;
    expect_close(got, want, 2e-6f, "add_rms_norm", n);
  }
}

TEST_P(ElementwiseVsTwin, SiluMulAddRope) {
  KILN_SKIP_UNLESS_SUPPORTED(GetParam());
  const ElementwiseKernels k = find_elementwise_kernels(GetParam());
  for (std::size_t n : kLengths) {
    std::vector<float> gate = random_matrix(1, n, 4, 4.0f);
    gate[0] = -100.0f;  // exp overflow side: silu → -0
    if (n > 1) gate[1] = 100.0f;
    const std::vector<float> up = random_matrix(1, n, 5, 1.0f);
    std::vector<float> got(n), want(n);
    k.silu_mul(gate.data(), up.data(), n, got.data());
    reference::silu_mul(gate.data(), up.data(), static_cast<std::int64_t>(n), want.data());
    expect_close(got, want, 1e-6f, "silu_mul", n);
    std::vector<float> aliased = gate;
    k.silu_mul(aliased.data(), up.data(), n, aliased.data());
    expect_close(aliased, want, 1e-6f, "silu_mul in place", n);

    std::vector<float> acc_got = up, acc_want = up;
    k.add(acc_got.data(), gate.data(), n);
    reference::add(acc_want.data(), gate.data(), static_cast<std::int64_t>(n));
    EXPECT_EQ(acc_got, acc_want) << "add is exact, length " << n;
  }
  for (std::size_t head_dim : {2, 16, 34, 64, 128}) {
    const std::size_t heads = 3, half = head_dim / 2;
    const std::vector<float> cos = random_matrix(1, half, 6, 1.0f), sin = random_matrix(1, half, 7, 1.0f);
    std::vector<float> got = random_matrix(heads, head_dim, 8, 2.0f), want = got;
    k.rope(got.data(), heads, head_dim, cos.data(), sin.data());
    reference::rope_rotate_half(want.data(), 1, static_cast<std::int64_t>(heads), static_cast<std::int64_t>(head_dim),
                                cos.data(), sin.data());
    expect_close(got, want, 1e-6f, "rope", head_dim);
  }
}

TEST(LogSumExpTwin, EqualValuesGiveTheirValuePlusLogCount) {
  for (const float c : {-50.0f, 0.0f, 3.5f, 80.0f}) {
    const std::vector<float> x(1000, c);
    EXPECT_NEAR(reference::log_sum_exp(x.data(), 1000), c + std::log(1000.0), 1e-12);
  }
}

TEST_P(ElementwiseVsTwin, LogSumExp) {
  KILN_SKIP_UNLESS_SUPPORTED(GetParam());
  const ElementwiseKernels k = find_elementwise_kernels(GetParam());
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<std::size_t> lengths(std::begin(kLengths), std::end(kLengths));
  lengths.push_back(128256);
  for (std::size_t n : lengths) {
    std::vector<float> x = random_matrix(1, n, 9, 30.0f);
    const auto expect_twin = [&](const char* what) {
      const double want = reference::log_sum_exp(x.data(), static_cast<std::int64_t>(n));
      EXPECT_NEAR(k.log_sum_exp(x.data(), n), want, 5e-6) << what << " length " << n;
    };
    expect_twin("random");
    x[n / 2] = 200.0f;  // one dominant logit
    expect_twin("dominant");
    for (std::size_t i = 0; i < n; i += 3) x[i] = -kInf;  // masked tokens (the dominant one may be among them)
    x[n - 1] = 1.0f;
    expect_twin("masked");
  }
  const std::vector<float> masked(37, -kInf);
  EXPECT_EQ(k.log_sum_exp(masked.data(), masked.size()), -kInf);
  std::vector<float> overflow = random_matrix(1, 37, 10, 1.0f);
  overflow[20] = kInf;
  EXPECT_EQ(k.log_sum_exp(overflow.data(), overflow.size()), kInf);
}

// The first largest value's index, as the twin (std::max_element's rule) picks it: on random
// rows, with the maximum repeated (the first copy wins), at the last position, and among -inf.
TEST_P(ElementwiseVsTwin, Argmax) {
  KILN_SKIP_UNLESS_SUPPORTED(GetParam());
  const ElementwiseKernels k = find_elementwise_kernels(GetParam());
  std::vector<std::size_t> lengths(std::begin(kLengths), std::end(kLengths));
  lengths.push_back(128256);
  for (std::size_t n : lengths) {
    std::vector<float> x = random_matrix(1, n, 11, 30.0f);
    const auto want = [&] {
      return static_cast<std::size_t>(reference::argmax(x.data(), static_cast<std::int64_t>(n)));
    };
    EXPECT_EQ(k.argmax(x.data(), n), want()) << "length " << n;
    x[n - 1] = 1000.0f;
    EXPECT_EQ(k.argmax(x.data(), n), n - 1) << "length " << n;
    x[n / 3] = 1000.0f;  // a tie: the first copy
    EXPECT_EQ(k.argmax(x.data(), n), n / 3) << "length " << n;
    EXPECT_EQ(want(), n / 3);
  }
  const std::vector<float> masked(37, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(k.argmax(masked.data(), masked.size()), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, ElementwiseVsTwin, ::testing::ValuesIn(all_isas()),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace kiln::kernels
