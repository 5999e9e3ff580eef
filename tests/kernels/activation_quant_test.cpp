// Oracles: the quantisation bound |x - code * scale| <= scale / 2 with codes in [-127, 127], the
// chunk sums equal the sum of the codes, padding is zero, and every ISA's quantiser is
// bit-identical to the scalar reference.
#include "kernels/activation_quant.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/matmul.hpp"
#include "matmul_test_util.hpp"
#include "support/test_support.hpp"

namespace kiln::kernels {
namespace {

using testing::random_matrix;

TEST(ActivationQuant, ReferenceBoundsAndSums) {
  for (std::size_t group : {32u, 64u, 1000u}) {
    const std::size_t n = 3, in = 200;
    std::vector<float> x = random_matrix(n, in, 3);
    std::fill(x.begin() + in, x.begin() + in + 64, 0.0f);  // an all-zero group in row 1
    x[2 * in + 5] = 1e4f;                                  // an outlier in row 2
    ActivationBuffer buffer(n, in, group);
    const QuantizedActivations q = buffer.view(n);
    quantize_activations_reference(x.data(), q, 0, n);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < q.row_stride; ++k) {
        const int code = q.codes[i * q.row_stride + k];
        if (k >= in) {
          ASSERT_EQ(code, 0) << "padding at " << k;
          continue;
        }
        ASSERT_GE(code, -127);
        ASSERT_LE(code, 127);
        const float scale = q.scales[i * q.groups + k / group];
        EXPECT_LE(std::fabs(x[i * in + k] - code * scale), scale / 2 * 1.0001f) << i << "," << k;
      }
      for (std::size_t c = 0; c < q.chunks; ++c) {
        int sum = 0;
        for (std::size_t k = c * 32; k < c * 32 + 32; ++k) sum += q.codes[i * q.row_stride + k];
        EXPECT_EQ(q.chunk_sums[i * q.chunks + c], sum);
      }
    }
    if (group == 32) {
      EXPECT_EQ(q.scales[1 * q.groups + 0], 0.0f);  // all-zero group: scale 0, codes 0
      EXPECT_EQ(q.codes[2 * q.row_stride + 5], 127);
    }
  }
}

TEST(ActivationQuant, RejectsBadGroupSizes) {
  EXPECT_KILN_ERROR(ActivationBuffer(1, 100, 48), "DYNAMIC_QUANTIZATION_GROUP_SIZE 48", "multiple of 32");
  EXPECT_KILN_ERROR(ActivationBuffer(1, 100, 0), "DYNAMIC_QUANTIZATION_GROUP_SIZE 0");
  EXPECT_NO_THROW(ActivationBuffer(1, 100, 100));
}

class QuantizeIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(QuantizeIsa, BitIdenticalToReference) {
  KILN_SKIP_UNLESS_SUPPORTED(GetParam());
  for (std::size_t in : {32u, 100u, 257u}) {
    for (std::size_t group : {32u, 64u, 4096u}) {
      const std::size_t n = 5;
      const std::vector<float> x = random_matrix(n, in, 9 + in + group, 3.0f);
      ActivationBuffer want_buffer(n, in, group), got_buffer(n, in, group);
      const QuantizedActivations want = want_buffer.view(n), got = got_buffer.view(n);
      quantize_activations_reference(x.data(), want, 0, n);
      find_quantize_activations(GetParam())(x.data(), got, 0, n);
      EXPECT_EQ(std::memcmp(want.codes, got.codes, n * want.row_stride), 0) << in << "/" << group;
      EXPECT_EQ(std::memcmp(want.scales, got.scales, n * want.groups * 4), 0) << in << "/" << group;
      EXPECT_EQ(std::memcmp(want.chunk_sums, got.chunk_sums, n * want.chunks * 4), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, QuantizeIsa, ::testing::ValuesIn(testing::all_isas()),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace kiln::kernels
