// The kScalar ISA level: the reference twins behind the MatmulFn signature, over the canonical
// layout that pack_weights(…, Isa::kScalar) keeps.
#include "kernels/matmul_table.hpp"
#include "kernels/reference/matmul.hpp"

namespace kiln::kernels {
namespace {

void scalar_int8(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  reference::matmul_int8_activations(w.canonical_view(), *a.xq, int8_block_columns(w.layout, a.xq->group_size), a.bias,
                                     a.y, a.y_stride, row_begin, row_end);
}

void scalar_f32(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  reference::matmul_f32_activations(w.canonical_view(), a.x, a.n, a.bias, a.y, a.y_stride, row_begin, row_end);
}

constexpr MatmulTable make_table() {
  MatmulTable t;
  for (WeightScheme s : kAllWeightSchemes) {
    t.f32[scheme_index(s)] = {scalar_f32, scalar_f32};
    if (is_integer_scheme(s)) t.int8[scheme_index(s)] = {scalar_int8, scalar_int8};
  }
  t.quantize = quantize_activations_reference;
  return t;
}

constexpr MatmulTable kScalarTable = make_table();

}  // namespace

const MatmulTable& scalar_matmul_table() { return kScalarTable; }

}  // namespace kiln::kernels
