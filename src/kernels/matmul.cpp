// Kernel lookup: the ISA's table, the scheme and the activation mode give one MatmulKernels.
#include "kernels/matmul.hpp"

#include <algorithm>
#include <string>

#include "kernels/matmul_table.hpp"
#include "kernels/x86/amx/amx_kernels.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "util/error.hpp"

namespace kiln::kernels {
namespace {

const MatmulTable& table_for(Isa isa) {
  if (!isa_supported(isa)) {
    fail(ErrorKind::kUnsupported, "ISA '{}' is not supported by this CPU (detected: {})", isa_name(isa),
         isa_name(detected_isa()));
  }
  switch (isa) {
    case Isa::kAvx2: return avx2::matmul_table();
    case Isa::kAvx512: return avx512::matmul_table();
    case Isa::kAmx: return amx::matmul_table();
    default: return scalar_matmul_table();
  }
}

// 0 stands for "one group covers the whole row".
std::size_t effective_group(std::size_t group_size, std::size_t in) { return group_size >= in ? 0 : group_size; }

}  // namespace

std::string_view activation_mode_name(ActivationMode mode) { return mode == ActivationMode::kInt8 ? "int8" : "f32"; }

MatmulKernels find_matmul_kernels(Isa isa, WeightScheme scheme, ActivationMode mode) {
  const MatmulTable& table = table_for(isa);
  const auto& entries = mode == ActivationMode::kInt8 ? table.int8 : table.f32;
  const MatmulKernels found = entries[scheme_index(scheme)];
  if (found.gemv && found.gemm) return found;
  std::string accepted;
  for (WeightScheme s : kAllWeightSchemes) {
    if (!entries[scheme_index(s)].gemv) continue;
    if (!accepted.empty()) accepted += ", ";
    accepted += weight_scheme_name(s);
  }
  fail(ErrorKind::kUnsupported,
       "no {} matmul kernel for {} weights with {} activations (accepted with {} activations: {})", isa_name(isa),
       weight_scheme_name(scheme), activation_mode_name(mode), activation_mode_name(mode), accepted);
}

QuantizeActivationsFn find_quantize_activations(Isa isa) { return table_for(isa).quantize; }

std::size_t int8_block_columns(const PackedLayout& w, std::size_t act_group_size) {
  // NOTE: int32 lanes may wrap while a block is summed, but the block's exact Σ (code - zp) · q,
  // up to 255 · 127 · block, must fit in int32 (block < 66000). A block never exceeds kMaxBlock:
  // where both scales cover the whole row any split is exact, and a group that long is split
  // into its largest divisor that is a multiple of 32 (the scales are constant within it).
  constexpr std::size_t kMaxBlock = 16384;
  const std::size_t gw = effective_group(w.group_size, w.in);
  const std::size_t ga = effective_group(act_group_size, w.in);
  if (gw == 0 && ga == 0) return std::min(w.k_padded, kMaxBlock);
  std::size_t block = gw == 0 ? ga : ga == 0 ? gw : std::min(gw, ga);
  if (block > kMaxBlock && block % kActivationChunk == 0) {
    std::size_t divisor = kMaxBlock;
    while (block % divisor != 0) divisor -= kActivationChunk;
    block = divisor;
  }
  return block;
}

void check_activation_groups(const PackedLayout& w, std::size_t act_group_size, std::string_view name) {
  if (!is_integer_scheme(w.scheme)) {
    fail(ErrorKind::kUnsupported,
         "tensor '{}': {} weights take f32 activations; dynamic quantisation applies to int4 / "
         "int8 weights only",
         name, weight_scheme_name(w.scheme));
  }
  const std::size_t gw = effective_group(w.group_size, w.in);
  const std::size_t ga = effective_group(act_group_size, w.in);
  if (act_group_size == 0 || (ga != 0 && ga % kActivationChunk != 0)) {
    fail(
        "tensor '{}': DYNAMIC_QUANTIZATION_GROUP_SIZE {} is not supported (accepted: a multiple "
        "of {}, or >= the input width {})",
        name, act_group_size, kActivationChunk, w.in);
  }
  if (gw != 0 && ga != 0 && std::max(gw, ga) % std::min(gw, ga) != 0) {
    fail(
        "tensor '{}': DYNAMIC_QUANTIZATION_GROUP_SIZE {} and the weight group size {} do not "
        "nest (one must be a multiple of the other)",
        name, act_group_size, w.group_size);
  }
}

void check_matmul_args(const PackedWeights& w, const MatmulArgs& args, ActivationMode mode, std::string_view name) {
  const PackedLayout& l = w.layout;
  if (w.blob == nullptr) fail("tensor '{}': packed weights are missing", name);
  if (args.n == 0 || args.y == nullptr) fail("tensor '{}': matmul needs at least one row and an output", name);
  if (args.y_stride < l.out) {
    fail("tensor '{}': output row stride {} is below the {} output columns", name, args.y_stride, l.out);
  }
  if (mode == ActivationMode::kF32) {
    if (args.x == nullptr) fail("tensor '{}': f32 activations are missing", name);
    return;
  }
  if (args.xq == nullptr) fail("tensor '{}': quantised activations are missing", name);
  if (args.xq->in != l.in) {
    fail("tensor '{}': activations are {} wide, the weight's input width is {}", name, args.xq->in, l.in);
  }
  if (args.xq->n < args.n) {
    fail("tensor '{}': {} rows requested, {} quantised", name, args.n, args.xq->n);
  }
  check_activation_groups(l, args.xq->group_size, name);
}

}  // namespace kiln::kernels
