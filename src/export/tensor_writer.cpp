#include "export/tensor_writer.hpp"

#include <algorithm>
#include <vector>

#include "ir/tensor_convert.hpp"
#include "util/error.hpp"
#include "util/mapped_file.hpp"

namespace kiln::exporter {
namespace {

constexpr std::size_t kChunkBytes = 8u << 20;  // f32 bytes converted at a time

std::span<const std::uint8_t> as_bytes(const std::vector<std::uint16_t>& v) {
  return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(std::uint16_t)};
}

ir::IrTensorEntry entry_for(const TensorPlan& plan) {
  ir::IrTensorEntry e;
  e.name = plan.spec.name;
  e.shape = plan.spec.shape;
  e.storage = ir::code_storage(plan.scheme);
  if (!is_float_scheme(plan.scheme)) {
    ir::IrQuantization q;
    q.scheme = plan.scheme;
    q.group_size = plan.group_size;
    q.scale = ir::scale_tensor_name(plan.spec.name);
    if (has_zero_points(plan.scheme)) q.zero_point = ir::zero_point_tensor_name(plan.spec.name);
    e.quantization = std::move(q);
  }
  return e;
}

// Writes the scale and zero-point entries after the codes.
void write_companions(ir::IrWriter& writer, const TensorPlan& plan, const std::vector<std::uint16_t>& scales,
                      const std::vector<std::uint8_t>& zero_points) {
  const std::int64_t out = plan.spec.shape[0];
  const auto groups = static_cast<std::int64_t>(
      num_groups(static_cast<std::size_t>(plan.spec.shape[1]), static_cast<std::size_t>(plan.group_size)));
  writer.add_tensor(ir::IrTensorEntry::plain(ir::scale_tensor_name(plan.spec.name), ElementType::kF16, {out, groups}),
                    as_bytes(scales));
  if (has_zero_points(plan.scheme)) {
    writer.add_tensor(ir::IrTensorEntry::plain(ir::zero_point_tensor_name(plan.spec.name),
                                               ir::zero_point_storage(plan.scheme), {out, groups}),
                      zero_points);
  }
}

std::int64_t rows_of(const TensorPlan& plan) { return plan.spec.shape.size() > 1 ? plan.spec.shape[0] : 1; }
std::int64_t cols_of(const TensorPlan& plan) { return plan.spec.shape.back(); }

// Rows per chunk: even, so 4-bit codes and zero points of a chunk start on a byte boundary.
std::int64_t chunk_rows(std::int64_t cols) {
  const auto rows = std::max<std::int64_t>(2, static_cast<std::int64_t>(kChunkBytes / 4) / cols);
  return rows - rows % 2;
}

// Quantises / converts rows [first, first + rows) given in f32 and appends them.
void write_rows(ir::IrWriter& writer, const TensorPlan& plan, std::span<const float> values, std::int64_t rows,
                std::vector<std::uint16_t>& scales, std::vector<std::uint8_t>& zero_points) {
  const std::int64_t cols = cols_of(plan);
  const QuantizedMatrix m = quantize_weights(values, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols),
                                             plan.scheme, static_cast<std::size_t>(plan.group_size), plan.spec.name);
  writer.write(m.data());
  scales.insert(scales.end(), m.scales().begin(), m.scales().end());
  zero_points.insert(zero_points.end(), m.zero_points().begin(), m.zero_points().end());
}

bool same_float_storage(const TensorPlan& plan, const ir::TensorView& source) {
  if (source.is_quantized()) return false;
  return (plan.scheme == WeightScheme::kF32 && source.dtype == ElementType::kF32) ||
         (plan.scheme == WeightScheme::kF16 && source.dtype == ElementType::kF16) ||
         (plan.scheme == WeightScheme::kBf16 && source.dtype == ElementType::kBf16);
}

}  // namespace

void write_streamed(ir::IrWriter& writer, const TensorPlan& plan, const ir::TensorView& source) {
  writer.begin_tensor(entry_for(plan));
  if (same_float_storage(plan, source)) {
    writer.write(source.bytes);  // unchanged precision: the exact bytes
    writer.end_tensor();
    return;
  }
  const std::int64_t rows = rows_of(plan), cols = cols_of(plan);
  const std::int64_t step = chunk_rows(cols);
  std::vector<float> chunk;  // [step, cols]
  std::vector<std::uint16_t> scales;
  std::vector<std::uint8_t> zero_points;
  for (std::int64_t first = 0; first < rows; first += step) {
    const std::int64_t n = std::min(step, rows - first);
    chunk.resize(static_cast<std::size_t>(n * cols));
    ir::convert_to_f32(source, first * cols, n * cols, chunk.data());
    write_rows(writer, plan, chunk, n, scales, zero_points);
    if (!source.is_quantized()) {
      // Drop the rows just read from this process's resident set (a 128k-row embedding is 0.5 GB).
      const std::size_t element = element_bytes(source.dtype);
      release_file_pages(source.bytes.subspan(static_cast<std::size_t>(first * cols) * element,
                                              static_cast<std::size_t>(n * cols) * element));
    }
  }
  writer.end_tensor();
  if (!is_float_scheme(plan.scheme)) write_companions(writer, plan, scales, zero_points);
}

void write_f32(ir::IrWriter& writer, const TensorPlan& plan, std::span<const float> values) {
  writer.begin_tensor(entry_for(plan));
  std::vector<std::uint16_t> scales;
  std::vector<std::uint8_t> zero_points;
  write_rows(writer, plan, values, rows_of(plan), scales, zero_points);
  writer.end_tensor();
  if (!is_float_scheme(plan.scheme)) write_companions(writer, plan, scales, zero_points);
}

void write_quantized(ir::IrWriter& writer, const TensorPlan& plan, const QuantizedMatrix& matrix) {
  if (matrix.scheme() != plan.scheme || matrix.group_size() != static_cast<std::size_t>(plan.group_size)) {
    fail(ErrorKind::kInternal, "tensor '{}': quantised as {} g{} but planned as {} g{}", plan.spec.name,
         weight_scheme_name(matrix.scheme()), matrix.group_size(), weight_scheme_name(plan.scheme), plan.group_size);
  }
  writer.add_tensor(entry_for(plan), matrix.data());
  write_companions(writer, plan, matrix.scales(), matrix.zero_points());
}

void release_source_pages(const ir::TensorView& source) { release_file_pages(source.bytes); }

}  // namespace kiln::exporter
