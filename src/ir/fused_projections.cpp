#include "ir/fused_projections.hpp"

#include "util/error.hpp"

namespace kiln::ir {

SplitProjection split_rows(const TensorView& fused, const std::vector<std::pair<std::string, std::int64_t>>& parts,
                           const std::string& origin) {
  std::int64_t rows = 0;
  for (const auto& [name, part_rows] : parts) rows += part_rows;
  if (fused.shape.size() != 2 || fused.shape[0] != rows) {
    fail(ErrorKind::kInvalidInput, "tensor '{}' has shape {}, but the {} config implies [{}, in]", fused.name,
         format_shape(fused.shape), origin, rows);
  }
  const auto in = static_cast<std::size_t>(fused.shape[1]);
  const auto cut = [&](std::span<const std::uint8_t> bytes, std::size_t first, std::size_t count) {
    const std::size_t row_bytes = bytes.size() / static_cast<std::size_t>(rows);
    return bytes.subspan(first * row_bytes, count * row_bytes);
  };
  // A quantised matrix's rows (codes, scales, zero points) are cut on whole bytes only.
  if (fused.is_quantized()) {
    const TensorQuantization& q = *fused.quantization;
    const std::size_t groups = num_groups(in, static_cast<std::size_t>(q.group_size));
    if (is_4bit_scheme(q.scheme) && (in % 2 != 0 || (has_zero_points(q.scheme) && groups % 2 != 0))) {
      fail(ErrorKind::kUnsupported, "tensor '{}': its 4-bit rows do not start on whole bytes, so it cannot be split",
           fused.name);
    }
  }
  SplitProjection split{fused.name, {}};
  std::size_t first = 0;
  for (const auto& [name, part_rows] : parts) {
    const auto count = static_cast<std::size_t>(part_rows);
    TensorView part = fused;
    part.name = name;
    part.shape = {part_rows, fused.shape[1]};
    part.bytes = cut(fused.bytes, first, count);
    if (part.quantization) {
      part.quantization->scales = cut(fused.quantization->scales, first, count);
      if (has_zero_points(part.quantization->scheme)) {
        part.quantization->zero_points = cut(fused.quantization->zero_points, first, count);
      }
    }
    split.parts.push_back(std::move(part));
    first += count;
  }
  return split;
}

}  // namespace kiln::ir
