#include "ir/tensor_convert.hpp"

#include <cstring>

#include "util/error.hpp"
#include "util/half.hpp"

namespace kiln::ir {

void convert_to_f32(const TensorView& tensor, std::int64_t first, std::int64_t count, float* out) {
  KILN_DASSERT(first >= 0 && first + count <= tensor.num_elements());
  const std::uint8_t* base = tensor.bytes.data();
  switch (tensor.dtype) {
    case DType::kF32:
      std::memcpy(out, base + first * 4, static_cast<std::size_t>(count) * 4);
      return;
    case DType::kF16:
    case DType::kBF16: {
      const bool is_f16 = tensor.dtype == DType::kF16;
      for (std::int64_t i = 0; i < count; ++i) {
        std::uint16_t h;
        std::memcpy(&h, base + (first + i) * 2, 2);
        out[i] = is_f16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
      return;
    }
    default:
      fail(ErrorKind::kUnsupported, "tensor '{}': dtype {} cannot be read as float (accepted: F32, F16, BF16)",
           tensor.name, dtype_name(tensor.dtype));
  }
}

std::vector<float> to_f32(const TensorView& tensor) {
  std::vector<float> out(static_cast<std::size_t>(tensor.num_elements()));
  convert_to_f32(tensor, 0, tensor.num_elements(), out.data());
  return out;
}

}  // namespace kiln::ir
