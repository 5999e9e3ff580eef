// Internal: the per-ISA dispatch tables behind find_matmul_kernels. Each ISA's table lives in
// that ISA's translation unit and is constant-initialised (no code runs before the CPU check);
// matmul.cpp only touches a table after isa_supported() said yes.
#pragma once

#include <array>

#include "kernels/matmul.hpp"

namespace kiln::kernels {

inline constexpr std::size_t kNumWeightSchemes = kAllWeightSchemes.size();

inline constexpr std::size_t scheme_index(WeightScheme scheme) { return static_cast<std::size_t>(scheme); }

struct MatmulTable {
  std::array<MatmulKernels, kNumWeightSchemes> int8{};  // kInt8 activations, by scheme_index
  std::array<MatmulKernels, kNumWeightSchemes> f32{};   // kF32 activations
  QuantizeActivationsFn quantize = nullptr;
};

// The kScalar level (reference/matmul_scalar.cpp); each ISA declares its own in x86/<isa>/<isa>_kernels.hpp.
const MatmulTable& scalar_matmul_table();

}  // namespace kiln::kernels
