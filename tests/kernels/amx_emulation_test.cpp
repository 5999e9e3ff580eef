// Oracle: the AMX kernels, run on an emulation of the tile instructions (amx_emulation.cpp),
// equal the scalar reference twins, for 16-token tiles plus a tail (n = 16, 17, 40), rows not
// a multiple of 16, `in` not a multiple of 64, every integer scheme and bf16. The real
// instructions are covered by the amx cases of MatmulVsReference on a CPU with AMX.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/matmul_table.hpp"
#include "kernels/reference/matmul.hpp"
#include "matmul_test_util.hpp"

namespace kiln::kernels {

namespace amx_emulated {
const MatmulTable& matmul_table();  // amx_emulation.cpp: the AMX kernels on emulated tiles
}  // namespace amx_emulated

namespace {

using testing::random_matrix;

struct EmulatedCase {
  WeightScheme scheme;
  std::size_t out, in, group, act_group;
};

TEST(AmxEmulation, GemmEqualsReference) {
  KILN_SKIP_UNLESS_SUPPORTED(Isa::kAvx512);
  const EmulatedCase cases[] = {{WeightScheme::kInt4Sym, 37, 200, 64, 128},
                                {WeightScheme::kInt4Asym, 20, 256, 128, 32},
                                {WeightScheme::kInt8Sym, 33, 96, 96, 96},
                                {WeightScheme::kInt8Asym, 16, 160, 32, 160},
                                // Activation groups equal to the weight groups (the matched kernel),
                                // the last one ragged.
                                {WeightScheme::kInt4Sym, 37, 200, 64, 64},
                                {WeightScheme::kInt4Asym, 20, 256, 128, 128},
                                {WeightScheme::kInt8Asym, 16, 160, 32, 32},
                                {WeightScheme::kBf16, 21, 100, 100, 0}};
  for (const EmulatedCase& c : cases) {
    for (std::size_t n : {16u, 17u, 40u}) {
      const QuantizedMatrix m =
          quantize_weights(random_matrix(c.out, c.in, 3, 0.05f), c.out, c.in, c.scheme, c.group, "w");
      // The AMX layouts are the avx512 ones.
      const PackedMatrix packed = pack_weights(m.view(), Isa::kAvx512, "w");
      const std::vector<float> x = random_matrix(n, c.in, 4 + n);
      std::vector<float> got(n * c.out), want(n * c.out);
      const std::vector<float> bias = random_matrix(1, c.out, 5);
      const bool integer = is_integer_scheme(c.scheme);
      ActivationBuffer act(n, c.in, integer ? c.act_group : c.in);
      const QuantizedActivations xq = act.view(n);
      MatmulArgs args{n, x.data(), &xq, got.data(), c.out, bias.data()};
      const MatmulTable& table = amx_emulated::matmul_table();
      if (integer) {
        quantize_activations_reference(x.data(), xq, 0, n);
        table.int8[scheme_index(c.scheme)].gemm(packed.view(), args, 0, c.out);
        const PackedLayout scalar = packed_layout(Isa::kScalar, c.scheme, c.out, c.in, c.group);
        reference::matmul_int8_activations(m.view(), xq, int8_block_columns(scalar, c.act_group), bias.data(),
                                           want.data(), c.out, 0, c.out);
      } else {
        table.f32[scheme_index(c.scheme)].gemm(packed.view(), args, 0, c.out);
        reference::matmul_f32_activations(m.view(), x.data(), n, bias.data(), want.data(), c.out, 0, c.out);
      }
      for (std::size_t i = 0; i < n * c.out; ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::fabs(want[i])))
            << weight_scheme_name(c.scheme) << " n " << n << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::kernels
