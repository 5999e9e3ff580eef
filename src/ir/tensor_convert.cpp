#include "ir/tensor_convert.hpp"

#include <algorithm>
#include <cstring>

#include "util/error.hpp"
#include "util/half.hpp"

namespace kiln::ir {
namespace {

// Quantised matrices decode a row at a time through the kernels' reference dequantisation; a
// range that starts or ends mid-row decodes the whole row and copies the part asked for.
void dequantize_range(const TensorView& tensor, std::int64_t first, std::int64_t count, float* out) {
  const WeightView view = weight_view(tensor);
  const auto in = static_cast<std::int64_t>(view.in);
  std::vector<float> row;
  while (count > 0) {
    const std::int64_t r = first / in;
    const std::int64_t col = first % in;
    const std::int64_t n = std::min(count, in - col);
    if (col == 0 && n == in) {
      dequantize_row(view, static_cast<std::size_t>(r), {out, static_cast<std::size_t>(in)});
    } else {
      row.resize(static_cast<std::size_t>(in));  // [in]
      dequantize_row(view, static_cast<std::size_t>(r), row);
      std::copy_n(row.data() + col, n, out);
    }
    first += n;
    count -= n;
    out += n;
  }
}

}  // namespace

WeightView weight_view(const TensorView& tensor) {
  if (!tensor.quantization || tensor.shape.size() != 2) {
    fail(ErrorKind::kInternal, "tensor '{}': not a quantised matrix", tensor.name);
  }
  const TensorQuantization& q = *tensor.quantization;
  WeightView view;
  view.scheme = q.scheme;
  view.out = static_cast<std::size_t>(tensor.shape[0]);
  view.in = static_cast<std::size_t>(tensor.shape[1]);
  view.group_size = static_cast<std::size_t>(q.group_size);
  view.data = tensor.bytes.data();
  // The IR aligns every section to 64 bytes, so the f16 scales are 2-byte aligned.
  view.scales = reinterpret_cast<const std::uint16_t*>(q.scales.data());
  view.zero_points = q.zero_points.empty() ? nullptr : q.zero_points.data();
  return view;
}

void convert_to_f32(const TensorView& tensor, std::int64_t first, std::int64_t count, float* out) {
  KILN_DASSERT(first >= 0 && first + count <= tensor.num_elements());
  if (tensor.quantization) {
    dequantize_range(tensor, first, count, out);
    return;
  }
  const std::uint8_t* base = tensor.bytes.data();
  switch (tensor.dtype) {
    case ElementType::kF32: std::memcpy(out, base + first * 4, static_cast<std::size_t>(count) * 4); return;
    case ElementType::kF16:
    case ElementType::kBf16: {
      const bool is_f16 = tensor.dtype == ElementType::kF16;
      for (std::int64_t i = 0; i < count; ++i) {
        std::uint16_t h;
        std::memcpy(&h, base + (first + i) * 2, 2);
        out[i] = is_f16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
      return;
    }
    default:
      fail(ErrorKind::kUnsupported, "tensor '{}': dtype {} cannot be read as float (accepted: F32, F16, BF16)",
           tensor.name, element_type_name(tensor.dtype));
  }
}

std::vector<float> to_f32(const TensorView& tensor) {
  std::vector<float> out(static_cast<std::size_t>(tensor.num_elements()));
  convert_to_f32(tensor, 0, tensor.num_elements(), out.data());
  return out;
}

}  // namespace kiln::ir
