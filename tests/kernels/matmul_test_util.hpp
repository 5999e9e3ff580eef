// Helpers for the matmul tests: random matrices, the ISAs this CPU can run (unsupported ones
// skip visibly), and the error bound every comparison uses.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu_isa.hpp"

namespace kiln::kernels::testing {

inline std::vector<float> random_matrix(std::size_t rows, std::size_t cols, unsigned seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> m(rows * cols);
  for (float& v : m) v = dist(rng);
  return m;
}

inline const std::vector<Isa>& all_isas() {
  static const std::vector<Isa> isas = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx};
  return isas;
}

#define KILN_SKIP_UNLESS_SUPPORTED(isa)                                                    \
  do {                                                                                     \
    if (!::kiln::isa_supported(isa)) {                                                     \
      GTEST_SKIP() << "ISA " << ::kiln::isa_name(isa) << " is not supported by this CPU (" \
                   << ::kiln::describe_cpu_features() << ")";                              \
    }                                                                                      \
  } while (0)

// A kernel and its twin differ only by f32 rounding in a different summation order; relative to
// Σ|w·x| (magnitude) that stays far below 1e-5, while a wrong scale, zero point, column or row
// is off by O(magnitude).
inline void expect_close(float got, float want, double magnitude, const std::string& where) {
  EXPECT_LE(std::fabs(double(got) - double(want)), 1e-5 * magnitude + 1e-6)
      << where << ": got " << got << ", reference " << want << ", magnitude " << magnitude;
}

}  // namespace kiln::kernels::testing
