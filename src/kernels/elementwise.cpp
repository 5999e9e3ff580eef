// Kernel lookup, and the scalar level: one-row adapters over the reference twins.
#include "kernels/elementwise.hpp"

#include "kernels/reference/elementwise.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "util/error.hpp"

namespace kiln::kernels {
namespace {

namespace ref = reference;

void rms_norm_scalar(const float* x, const float* gain, double eps, std::size_t dim, float* out) {
  ref::rms_norm(x, gain, eps, 1, static_cast<std::int64_t>(dim), out);
}

void add_rms_norm_scalar(float* residual, const float* x, const float* gain, double eps, std::size_t dim, float* out) {
  ref::add(residual, x, static_cast<std::int64_t>(dim));
  ref::rms_norm(residual, gain, eps, 1, static_cast<std::int64_t>(dim), out);
}

void add_scalar(float* acc, const float* x, std::size_t count) { ref::add(acc, x, static_cast<std::int64_t>(count)); }

void silu_mul_scalar(const float* gate, const float* up, std::size_t count, float* out) {
  ref::silu_mul(gate, up, static_cast<std::int64_t>(count), out);
}

void rope_scalar(float* x, std::size_t heads, std::size_t head_dim, const float* cos, const float* sin) {
  ref::rope_rotate_half(x, 1, static_cast<std::int64_t>(heads), static_cast<std::int64_t>(head_dim), cos, sin);
}

double log_sum_exp_scalar(const float* x, std::size_t count) {
  return ref::log_sum_exp(x, static_cast<std::int64_t>(count));
}

std::size_t argmax_scalar(const float* x, std::size_t count) {
  return static_cast<std::size_t>(ref::argmax(x, static_cast<std::int64_t>(count)));
}

}  // namespace

ElementwiseKernels find_elementwise_kernels(Isa isa) {
  if (!isa_supported(isa)) {
    fail(ErrorKind::kUnsupported, "ISA '{}' is not supported by this CPU (detected: {})", isa_name(isa),
         isa_name(detected_isa()));
  }
  switch (isa) {
    case Isa::kAvx2: return avx2::elementwise_kernels();
    case Isa::kAvx512:
    case Isa::kAmx: return avx512::elementwise_kernels();
    case Isa::kScalar: break;
  }
  return {rms_norm_scalar, add_rms_norm_scalar, add_scalar,   silu_mul_scalar,
          rope_scalar,     log_sum_exp_scalar,  argmax_scalar};
}

}  // namespace kiln::kernels
