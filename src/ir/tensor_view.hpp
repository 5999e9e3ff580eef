// A named, typed, shaped view of tensor bytes that live elsewhere (a memory-mapped file).
// The view never owns its bytes: whoever produced it keeps the mapping alive.
#pragma once

#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.hpp"

namespace kiln::ir {

struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::int64_t> shape;
  std::span<const std::uint8_t> bytes;

  std::int64_t num_elements() const {
    return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  }
};

// "[2048, 8192]"
std::string format_shape(const std::vector<std::int64_t>& shape);

}  // namespace kiln::ir
