// The ISA-free interface of the kernels that multiply activations by a weight matrix:
//   y[n, out] = x[n, in] · W[out, in]ᵀ (+ bias[out])
// Kernels are single-threaded over a range of output rows, so the caller's thread pool splits the
// rows; they never allocate. They are chosen once per (ISA, weight scheme, activation mode), at
// model-compile time, through find_matmul_kernels().
//
// Families (every one with a scalar reference twin in kernels/reference/matmul.hpp):
//   int4_sym/asym, int8_sym/asym × kInt8 activations  integer dot products (VNNI), dynamic
//                                                     per-group activation quantisation
//   int4_sym/asym, int8_sym/asym, nf4 × kF32          weights decoded to f32, f32 FMA
//   f32, f16 × kF32                                   f32 FMA
//   bf16 × kF32                                       activations rounded to bf16, products
//                                                     accumulated in f32 (vdpbf16ps / AMX-BF16)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/weight_format.hpp"
#include "kernels/activation_quant.hpp"
#include "kernels/cpu_isa.hpp"
#include "kernels/packed_weights.hpp"

namespace kiln::kernels {

enum class ActivationMode : std::uint8_t {
  kF32,   // activations used as f32 (dynamic quantisation off)
  kInt8,  // activations quantised to int8 per group (QuantizedActivations)
};

std::string_view activation_mode_name(ActivationMode mode);

struct MatmulArgs {
  std::size_t n = 0;                         // activation rows (tokens)
  const float* x = nullptr;                  // [n, in] row-major; kF32 mode
  const QuantizedActivations* xq = nullptr;  // kInt8 mode; xq->in == in
  float* y = nullptr;                        // [n, y_stride]; columns [row_begin, row_end) written
  std::size_t y_stride = 0;                  // >= out
  const float* bias = nullptr;               // [out] or null
};

// Computes output rows (= weight rows) [row_begin, row_end) for all n activation rows.
// Any range is valid; ranges aligned to layout.tile_rows avoid decoding a tile twice.
using MatmulFn = void (*)(const PackedWeights& w, const MatmulArgs& args, std::size_t row_begin, std::size_t row_end);

// Quantises rows [row_begin, row_end) of x [n, in] (see activation_quant.hpp).
using QuantizeActivationsFn = void (*)(const float* x, const QuantizedActivations& q, std::size_t row_begin,
                                       std::size_t row_end);

// gemv: tuned for n == 1 (decode); gemm: for many rows (prefill). Both accept any n >= 1.
struct MatmulKernels {
  MatmulFn gemv = nullptr;
  MatmulFn gemm = nullptr;
  // The call for n rows: gemv for one row; from two rows on, gemm streams the weights once for
  // all rows, which wins even when the call is bandwidth-bound (a few decoding sequences).
  MatmulFn for_rows(std::size_t n) const { return n < kGemmMinRows ? gemv : gemm; }
  static constexpr std::size_t kGemmMinRows = 2;
};

// The kernels for weights packed for `isa` (pack_weights) with this scheme and activation mode.
// Throws kiln::Error (kUnsupported) for a combination that has none, listing what is accepted
// (kInt8 needs an int4 / int8 scheme).
MatmulKernels find_matmul_kernels(Isa isa, WeightScheme scheme, ActivationMode mode);

// The activation quantiser for `isa`; bit-identical to quantize_activations_reference.
QuantizeActivationsFn find_quantize_activations(Isa isa);

// Whether activations quantised in groups of `act_group_size` can feed weights of this layout in
// kInt8 mode: the larger group size must be a multiple of the smaller (a size >= in counts as one
// group per row), so every integer block has one weight scale and one activation scale. Throws
// a kiln::Error naming `name`. Call once per layer at compile time, not on the token path.
void check_activation_groups(const PackedLayout& w, std::size_t act_group_size, std::string_view name);

// Checks that `args` fits `w` in this mode (pointers present, widths and strides consistent,
// activation groups compatible) and throws a kiln::Error naming `name` and the mismatch. O(1):
// the runtime calls it when it binds a layer's buffers; the kernels themselves trust their input.
void check_matmul_args(const PackedWeights& w, const MatmulArgs& args, ActivationMode mode, std::string_view name);

// The columns summed in integers before one scale multiply: the smaller of the two effective
// group sizes (a multiple of kActivationChunk), or the whole row when both cover it; at most
// 16384 so no block's integer sum can overflow int32.
std::size_t int8_block_columns(const PackedLayout& w, std::size_t act_group_size);

}  // namespace kiln::kernels
