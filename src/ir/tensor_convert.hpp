// Conversion of stored tensors to f32, element range by element range: float tensors (F32, F16,
// BF16) are converted, quantised matrices dequantised through the kernels' reference
// (ir/weight_format.hpp). Reads tolerate unaligned float data (safetensors headers are not
// always padded).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/tensor_view.hpp"

namespace kiln::ir {

// out [count] = elements [first, first + count) of the tensor as f32 (flat index over the
// logical shape). The tensor must be quantised or have a float dtype (F32, F16, BF16); anything
// else is a kiln::Error naming it.
void convert_to_f32(const TensorView& tensor, std::int64_t first, std::int64_t count, float* out);

// The whole tensor as f32.
std::vector<float> to_f32(const TensorView& tensor);

}  // namespace kiln::ir
