// The ISA-free interface of the element-wise kernels of a transformer layer, one row per call
// (the runtime splits rows across threads): RMSNorm, the residual add fused into the RMSNorm
// that follows it (one pass over the residual instead of two), SwiGLU's silu(gate)·up, the
// rotate-half RoPE, a plain add, the log-sum-exp that turns a row of logits into log-probabilities,
// and the argmax that picks a greedy token.
// Their scalar twins are kernels/reference/elementwise.hpp,
// which define the semantics (Hugging Face's Llama modules).
#pragma once

#include <cstddef>
#include <span>

#include "kernels/cpu_isa.hpp"

namespace kiln::kernels {

struct ElementwiseKernels {
  // out [dim] = x / sqrt(mean(x²) + eps) * gain. out may alias x.
  void (*rms_norm)(const float* x, const float* gain, double eps, std::size_t dim, float* out) = nullptr;
  // residual [dim] += x, then out = rms_norm(residual).
  void (*add_rms_norm)(float* residual, const float* x, const float* gain, double eps, std::size_t dim,
                       float* out) = nullptr;
  // acc [count] += x.
  void (*add)(float* acc, const float* x, std::size_t count) = nullptr;
  // out [count] = silu(gate) · up. out may alias gate or up.
  void (*silu_mul)(const float* gate, const float* up, std::size_t count, float* out) = nullptr;
  // Rotates x [heads, head_dim] in place (dimension i pairs with i + head_dim / 2) by one
  // position's cos/sin [head_dim / 2].
  void (*rope)(float* x, std::size_t heads, std::size_t head_dim, const float* cos, const float* sin) = nullptr;
  // log Σ exp(x) over x [count], count >= 1, shifted by max(x) so no term overflows; ±inf when
  // max(x) is ±inf (a row of fully masked logits gives -inf).
  double (*log_sum_exp)(const float* x, std::size_t count) = nullptr;
  // The index of the first largest value of x [count], count >= 1 (std::max_element's; greedy
  // decoding's token). Rows hold no NaN.
  std::size_t (*argmax)(const float* x, std::size_t count) = nullptr;
};

// The kernels for `isa`: the reference twins for Isa::kScalar, the avx512 ones also for amx.
ElementwiseKernels find_elementwise_kernels(Isa isa);

}  // namespace kiln::kernels
