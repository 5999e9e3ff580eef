#include "runtime/cpu/weight_plan.hpp"

#include "models/tensor_specs.hpp"
#include "util/error.hpp"

namespace kiln::runtime {

const PlannedMatrix* WeightPlan::find(std::string_view name) const {
  for (const PlannedMatrix& m : matrices) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

WeightView canonical_weight_view(const ir::TensorView& tensor) {
  if (tensor.shape.size() != 2)
    fail("tensor '{}': expected a matrix, got shape {}", tensor.name, ir::format_shape(tensor.shape));
  if (tensor.is_quantized()) return ir::weight_view(tensor);
  WeightView view;
  switch (tensor.dtype) {
    case ElementType::kF32: view.scheme = WeightScheme::kF32; break;
    case ElementType::kF16: view.scheme = WeightScheme::kF16; break;
    case ElementType::kBf16: view.scheme = WeightScheme::kBf16; break;
    default:
      fail(ErrorKind::kUnsupported,
           "tensor '{}': dtype {} is not a weight format (accepted: F32, F16, BF16, or quantised)", tensor.name,
           element_type_name(tensor.dtype));
  }
  view.out = static_cast<std::size_t>(tensor.shape[0]);
  view.in = static_cast<std::size_t>(tensor.shape[1]);
  view.group_size = view.in;
  view.data = tensor.bytes.data();
  return view;
}

WeightPlan plan_weights(const ir::ModelConfig& config, const ir::TensorSource& source, Isa isa) {
  WeightPlan plan;
  plan.isa = isa;
  for (const models::TensorSpec& spec : models::tensor_specs(config)) {
    const bool matrix = spec.use == models::WeightUse::kMatrix ||
                        (spec.use == models::WeightUse::kEmbedding && config.tie_word_embeddings);
    if (!matrix) continue;
    const ir::TensorView* tensor = source.find(spec.name);
    if (tensor == nullptr) fail(ErrorKind::kNotFound, "{}: tensor '{}' is missing", source.origin(), spec.name);
    PlannedMatrix m;
    m.name = spec.name;
    m.tensor = tensor;
    m.canonical = canonical_weight_view(*tensor);
    try {
      m.layout =
          kernels::packed_layout(isa, m.canonical.scheme, m.canonical.out, m.canonical.in, m.canonical.group_size);
    } catch (const Error& e) {
      fail(e.kind(), "tensor '{}': {}", spec.name, e.what());
    }
    m.offset = plan.total_bytes;
    plan.total_bytes += (m.layout.total_bytes + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment;
    plan.matrices.push_back(std::move(m));
  }
  return plan;
}

}  // namespace kiln::runtime
