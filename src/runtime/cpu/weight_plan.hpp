// Which matrices of a model the compiled CPU backend repacks, into which layout, and where each
// lands in the one blob that holds them all (in memory or in the compile cache). The plan is a
// pure function of the tensor set, the config and the ISA, so a cached blob can be checked
// against it field by field.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"
#include "kernels/packed_weights.hpp"

namespace kiln::runtime {

struct PlannedMatrix {
  std::string name;  // the Hugging Face tensor name
  const ir::TensorView* tensor = nullptr;
  WeightView canonical;  // over the tensor's bytes (mapped; may be unaligned for floats)
  kernels::PackedLayout layout;
  std::size_t offset = 0;  // in the blob, a multiple of kBlobAlignment
};

struct WeightPlan {
  Isa isa = Isa::kScalar;
  std::vector<PlannedMatrix> matrices;  // forward order
  std::size_t total_bytes = 0;

  const PlannedMatrix* find(std::string_view name) const;
};

// Every matrix is page-aligned in the blob, so its pages belong to it alone.
inline constexpr std::size_t kBlobAlignment = 4096;

// Plans every [out, in] weight the forward pass multiplies by: the layers' matrices, a separate
// head, and the embedding when it is tied (it then also serves as the head). Throws kiln::Error
// naming the tensor when its format has no kernel on this ISA.
WeightPlan plan_weights(const ir::ModelConfig& config, const ir::TensorSource& source, Isa isa);

// The canonical view of a 2-D weight tensor: its quantisation, or its float dtype as a float
// scheme. Throws for other dtypes.
WeightView canonical_weight_view(const ir::TensorView& tensor);

}  // namespace kiln::runtime
