// The compiled CPU backend's weights: a packed matrix bound to its kernels, a vector converted
// to f32, or an embedding table read where it lies (mapped) that may also be the packed head.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/tensor_view.hpp"
#include "kernels/matmul.hpp"
#include "models/ops.hpp"

namespace kiln::runtime {

struct BoundMatrix {
  std::string name;
  kernels::PackedWeights packed;
  kernels::MatmulKernels kernels;
  kernels::ActivationMode mode = kernels::ActivationMode::kF32;
};

class CpuWeight final : public models::Weight {
 public:
  std::optional<BoundMatrix> matrix;    // kMatrix, and a tied embedding
  std::vector<float> values;            // kVector: [count]
  std::optional<ir::TensorView> table;  // kEmbedding: [vocab, hidden], mapped
};

inline const CpuWeight& as_cpu(const models::Weight& w) { return static_cast<const CpuWeight&>(w); }

}  // namespace kiln::runtime
