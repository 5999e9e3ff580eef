// A named, typed, shaped view of tensor bytes that live elsewhere (a memory-mapped file).
// The view never owns its bytes: whoever produced it keeps the mapping alive.
#pragma once

#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/weight_format.hpp"
#include "util/element_type.hpp"

namespace kiln::ir {

// How a quantised [out, in] weight matrix is stored (layouts in ir/weight_format.hpp).
// For such a tensor `bytes` holds the codes, `shape` is the logical [out, in] and `dtype` is U8
// (raw codes: the scheme says how to read them).
struct TensorQuantization {
  WeightScheme scheme = WeightScheme::kInt8Sym;
  std::int64_t group_size = 0;                // 1..in; in = per-channel
  std::span<const std::uint8_t> scales;       // f16 [out, num_groups]
  std::span<const std::uint8_t> zero_points;  // packed like the codes; empty for sym schemes and nf4
};

struct TensorView {
  std::string name;
  ElementType dtype = ElementType::kF32;
  std::vector<std::int64_t> shape;
  std::span<const std::uint8_t> bytes;
  std::optional<TensorQuantization> quantization;  // set for quantised weights only

  std::int64_t num_elements() const {
    return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  }
  bool is_quantized() const { return quantization.has_value(); }
};

// "[2048, 8192]"
std::string format_shape(const std::vector<std::int64_t>& shape);

// The kernels' view of a quantised matrix tensor (scales and zero points included). The tensor
// must be quantised and 2-D; its sections are not copied.
WeightView weight_view(const TensorView& tensor);

}  // namespace kiln::ir
