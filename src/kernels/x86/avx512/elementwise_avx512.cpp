// AVX-512 element-wise kernels (one row per call). The sum of squares runs in four f32
// accumulators and the 1/rms factor is formed in double, which keeps RMSNorm within ~1e-6 of the
// double-precision twin. No std:: (ISA translation unit; see src/kernels/CMakeLists.txt).
#include <immintrin.h>

#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "kernels/x86/avx512/vector_math_avx512.hpp"

namespace kiln::kernels {
namespace {

namespace vm = avx512_math;

float sum_of_squares(const float* x, long dim) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  long i = 0;
  for (; i + 64 <= dim; i += 64) {
    const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    const __m512 c = _mm512_loadu_ps(x + i + 32), d = _mm512_loadu_ps(x + i + 48);
    s0 = _mm512_fmadd_ps(a, a, s0);
    s1 = _mm512_fmadd_ps(b, b, s1);
    s2 = _mm512_fmadd_ps(c, c, s2);
    s3 = _mm512_fmadd_ps(d, d, s3);
  }
  for (; i < dim; i += 16) {
    const __m512 a = _mm512_maskz_loadu_ps(vm::first_lanes(dim - i), x + i);
    s0 = _mm512_fmadd_ps(a, a, s0);
  }
  return vm::reduce_add(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

void scale_by_gain(const float* x, const float* gain, float inv_rms, long dim, float* out) {
  const __m512 f = _mm512_set1_ps(inv_rms);
  for (long i = 0; i < dim; i += 16) {
    const __mmask16 m = vm::first_lanes(dim - i);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), f);
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, gain + i)));
  }
}

float inverse_rms(float sum_sq, long dim, double eps) {
  return static_cast<float>(1.0 / __builtin_sqrt(static_cast<double>(sum_sq) / static_cast<double>(dim) + eps));
}

void rms_norm(const float* x, const float* gain, double eps, std::size_t n, float* out) {
  const long dim = static_cast<long>(n);
  scale_by_gain(x, gain, inverse_rms(sum_of_squares(x, dim), dim, eps), dim, out);
}

// The add and the sum of squares share one pass over the residual.
void add_rms_norm(float* residual, const float* x, const float* gain, double eps, std::size_t n, float* out) {
  const long dim = static_cast<long>(n);
  __m512 s = _mm512_setzero_ps();
  for (long i = 0; i < dim; i += 16) {
    const __mmask16 m = vm::first_lanes(dim - i);
    const __m512 r = _mm512_add_ps(_mm512_maskz_loadu_ps(m, residual + i), _mm512_maskz_loadu_ps(m, x + i));
    _mm512_mask_storeu_ps(residual + i, m, r);
    s = _mm512_fmadd_ps(r, r, s);
  }
  scale_by_gain(residual, gain, inverse_rms(vm::reduce_add(s), dim, eps), dim, out);
}

void add(float* acc, const float* x, std::size_t n) {
  const long count = static_cast<long>(n);
  for (long i = 0; i < count; i += 16) {
    const __mmask16 m = vm::first_lanes(count - i);
    _mm512_mask_storeu_ps(acc + i, m,
                          _mm512_add_ps(_mm512_maskz_loadu_ps(m, acc + i), _mm512_maskz_loadu_ps(m, x + i)));
  }
}

void silu_mul(const float* gate, const float* up, std::size_t n, float* out) {
  const long count = static_cast<long>(n);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (long i = 0; i < count; i += 16) {
    const __mmask16 m = vm::first_lanes(count - i);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 silu = _mm512_div_ps(g, _mm512_add_ps(one, vm::exp(_mm512_sub_ps(_mm512_setzero_ps(), g))));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(silu, _mm512_maskz_loadu_ps(m, up + i)));
  }
}

void rope(float* x, std::size_t heads, std::size_t head_dim, const float* cos, const float* sin) {
  const long half = static_cast<long>(head_dim / 2);
  for (std::size_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (long i = 0; i < half; i += 16) {
      const __mmask16 m = vm::first_lanes(half - i);
      const __m512 a = _mm512_maskz_loadu_ps(m, v + i), b = _mm512_maskz_loadu_ps(m, v + half + i);
      const __m512 c = _mm512_maskz_loadu_ps(m, cos + i), s = _mm512_maskz_loadu_ps(m, sin + i);
      _mm512_mask_storeu_ps(v + i, m, _mm512_fmsub_ps(a, c, _mm512_mul_ps(b, s)));
      _mm512_mask_storeu_ps(v + half + i, m, _mm512_fmadd_ps(b, c, _mm512_mul_ps(a, s)));
    }
  }
}

float max_of(const float* x, long count) {
  const __m512 lowest = _mm512_set1_ps(-__builtin_inff());
  __m512 m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
  long i = 0;
  for (; i + 64 <= count; i += 64) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
    m2 = _mm512_max_ps(m2, _mm512_loadu_ps(x + i + 32));
    m3 = _mm512_max_ps(m3, _mm512_loadu_ps(x + i + 48));
  }
  for (; i < count; i += 16) m0 = _mm512_max_ps(m0, _mm512_mask_loadu_ps(lowest, vm::first_lanes(count - i), x + i));
  return vm::reduce_max(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
}

// Σ exp(x − top) in f32 lanes over blocks of 1024 values, each block's sum added in double: the
// f32 rounding stays within ~1e-6 relative for any count (a 128k vocabulary included).
double sum_exp(const float* x, long count, float top) {
  constexpr long kBlock = 1024;
  const __m512 shift = _mm512_set1_ps(top);
  double total = 0.0;
  for (long start = 0; start < count; start += kBlock) {
    const long end = start + kBlock < count ? start + kBlock : count;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    long i = start;
    for (; i + 32 <= end; i += 32) {
      s0 = _mm512_add_ps(s0, vm::exp(_mm512_sub_ps(_mm512_loadu_ps(x + i), shift)));
      s1 = _mm512_add_ps(s1, vm::exp(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), shift)));
    }
    for (; i < end; i += 16) {
      const __mmask16 m = vm::first_lanes(end - i);
      s0 = _mm512_mask_add_ps(s0, m, s0, vm::exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), shift)));
    }
    total += static_cast<double>(vm::reduce_add(_mm512_add_ps(s0, s1)));
  }
  return total;
}

double log_sum_exp(const float* x, std::size_t n) {
  const long count = static_cast<long>(n);
  const float top = max_of(x, count);
  if (top == __builtin_inff() || top == -__builtin_inff()) return top;
  return static_cast<double>(top) + __builtin_log(sum_exp(x, count, top));
}

// The maximum first (four independent vmaxps chains), then its first position.
std::size_t argmax(const float* x, std::size_t n) {
  const long count = static_cast<long>(n);
  const __m512 top = _mm512_set1_ps(max_of(x, count));
  for (long i = 0; i < count; i += 16) {
    const __mmask16 lanes = vm::first_lanes(count - i);
    const __mmask16 hit = _mm512_mask_cmp_ps_mask(lanes, _mm512_maskz_loadu_ps(lanes, x + i), top, _CMP_EQ_OQ);
    if (hit != 0) return static_cast<std::size_t>(i + __builtin_ctz(hit));
  }
  return 0;
}

}  // namespace

ElementwiseKernels avx512::elementwise_kernels() {
  return {rms_norm, add_rms_norm, add, silu_mul, rope, log_sum_exp, argmax};
}

}  // namespace kiln::kernels
