// Writes one planned tensor into the IR: float tensors converted (or copied byte for byte when
// the precision is unchanged), quantised ones as codes then their scale and zero-point
// companions. Reading from a mapped checkpoint is streamed in row chunks of a few MiB, so a
// 128k-row embedding never sits in memory as f32.
#pragma once

#include <span>

#include "export/precision_plan.hpp"
#include "ir/ir_writer.hpp"
#include "ir/tensor_view.hpp"

namespace kiln::exporter {

// Round to nearest (or float conversion) of `source`, streamed.
void write_streamed(ir::IrWriter& writer, const TensorPlan& plan, const ir::TensorView& source);

// A tensor held in f32 (after AWQ changed it), round to nearest or converted.
void write_f32(ir::IrWriter& writer, const TensorPlan& plan, std::span<const float> values);

// An already quantised matrix (scale estimation, GPTQ).
void write_quantized(ir::IrWriter& writer, const TensorPlan& plan, const QuantizedMatrix& matrix);

// Tells the kernel the mapped pages of a source tensor are no longer needed, so they leave this
// process's resident set (file-backed pages count towards RSS while mapped).
void release_source_pages(const ir::TensorView& source);

}  // namespace kiln::exporter
