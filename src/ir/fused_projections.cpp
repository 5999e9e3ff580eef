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
  if (fused.is_quantized()) {
    fail(ErrorKind::kUnsupported, "tensor '{}': a quantised fused projection cannot be split", fused.name);
  }
  const std::size_t row_bytes = fused.bytes.size() / static_cast<std::size_t>(rows);
  SplitProjection split{fused.name, {}};
  std::int64_t first = 0;
  for (const auto& [name, part_rows] : parts) {
    TensorView part = fused;
    part.name = name;
    part.shape = {part_rows, fused.shape[1]};
    part.bytes = fused.bytes.subspan(static_cast<std::size_t>(first) * row_bytes,
                                     static_cast<std::size_t>(part_rows) * row_bytes);
    split.parts.push_back(std::move(part));
    first += part_rows;
  }
  return split;
}

}  // namespace kiln::ir
