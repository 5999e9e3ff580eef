// Conversion of stored float tensors (F32, F16, BF16) to f32, element range by element range.
// Reads tolerate unaligned data (safetensors headers are not always padded).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/tensor_view.hpp"

namespace kiln::ir {

// out [count] = elements [first, first + count) of the tensor as f32. The tensor must have a
// float dtype (F32, F16, BF16); anything else is a kiln::Error naming it.
void convert_to_f32(const TensorView& tensor, std::int64_t first, std::int64_t count, float* out);

// The whole tensor as f32.
std::vector<float> to_f32(const TensorView& tensor);

}  // namespace kiln::ir
