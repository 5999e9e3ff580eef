// AVX2 element-wise kernels (one row per call), the 8-lane version of elementwise_avx512.cpp;
// tails use masked loads and stores. No std:: (ISA translation unit).
#include <immintrin.h>

#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx2/vector_math_avx2.hpp"

namespace kiln::kernels {
namespace {

namespace vm = avx2_math;

inline __m256 load(const float* x, long left) {
  return left >= 8 ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, vm::first_lanes(left));
}

inline void store(float* x, long left, __m256 v) {
  if (left >= 8) {
    _mm256_storeu_ps(x, v);
  } else {
    _mm256_maskstore_ps(x, vm::first_lanes(left), v);
  }
}

float sum_of_squares(const float* x, long dim) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  long i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    const __m256 c = _mm256_loadu_ps(x + i + 16), d = _mm256_loadu_ps(x + i + 24);
    s0 = _mm256_fmadd_ps(a, a, s0);
    s1 = _mm256_fmadd_ps(b, b, s1);
    s2 = _mm256_fmadd_ps(c, c, s2);
    s3 = _mm256_fmadd_ps(d, d, s3);
  }
  for (; i < dim; i += 8) {
    const __m256 a = load(x + i, dim - i);
    s0 = _mm256_fmadd_ps(a, a, s0);
  }
  return vm::reduce_add(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

float inverse_rms(float sum_sq, long dim, double eps) {
  return static_cast<float>(1.0 / __builtin_sqrt(static_cast<double>(sum_sq) / static_cast<double>(dim) + eps));
}

void scale_by_gain(const float* x, const float* gain, float inv_rms, long dim, float* out) {
  const __m256 f = _mm256_set1_ps(inv_rms);
  for (long i = 0; i < dim; i += 8)
    store(out + i, dim - i, _mm256_mul_ps(_mm256_mul_ps(load(x + i, dim - i), f), load(gain + i, dim - i)));
}

void rms_norm(const float* x, const float* gain, double eps, std::size_t n, float* out) {
  const long dim = static_cast<long>(n);
  scale_by_gain(x, gain, inverse_rms(sum_of_squares(x, dim), dim, eps), dim, out);
}

void add_rms_norm(float* residual, const float* x, const float* gain, double eps, std::size_t n, float* out) {
  const long dim = static_cast<long>(n);
  __m256 s = _mm256_setzero_ps();
  for (long i = 0; i < dim; i += 8) {
    const __m256 r = _mm256_add_ps(load(residual + i, dim - i), load(x + i, dim - i));
    store(residual + i, dim - i, r);
    s = _mm256_fmadd_ps(r, r, s);
  }
  scale_by_gain(residual, gain, inverse_rms(vm::reduce_add(s), dim, eps), dim, out);
}

void add(float* acc, const float* x, std::size_t n) {
  const long count = static_cast<long>(n);
  for (long i = 0; i < count; i += 8)
    store(acc + i, count - i, _mm256_add_ps(load(acc + i, count - i), load(x + i, count - i)));
}

void silu_mul(const float* gate, const float* up, std::size_t n, float* out) {
  const long count = static_cast<long>(n);
  const __m256 one = _mm256_set1_ps(1.0f);
  for (long i = 0; i < count; i += 8) {
    const __m256 g = load(gate + i, count - i);
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, vm::exp(_mm256_sub_ps(_mm256_setzero_ps(), g))));
    store(out + i, count - i, _mm256_mul_ps(silu, load(up + i, count - i)));
  }
}

void rope(float* x, std::size_t heads, std::size_t head_dim, const float* cos, const float* sin) {
  const long half = static_cast<long>(head_dim / 2);
  for (std::size_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (long i = 0; i < half; i += 8) {
      const long left = half - i;
      const __m256 a = load(v + i, left), b = load(v + half + i, left);
      const __m256 c = load(cos + i, left), s = load(sin + i, left);
      store(v + i, left, _mm256_fmsub_ps(a, c, _mm256_mul_ps(b, s)));
      store(v + half + i, left, _mm256_fmadd_ps(b, c, _mm256_mul_ps(a, s)));
    }
  }
}

float max_of(const float* x, long count) {
  const __m256 lowest = _mm256_set1_ps(-__builtin_inff());
  __m256 m0 = lowest, m1 = lowest;
  long i = 0;
  for (; i + 16 <= count; i += 16) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
  }
  for (; i < count; i += 8) {
    const __m256i m = vm::first_lanes(count - i);
    m0 = _mm256_max_ps(m0, _mm256_blendv_ps(lowest, _mm256_maskload_ps(x + i, m), _mm256_castsi256_ps(m)));
  }
  return vm::reduce_max(_mm256_max_ps(m0, m1));
}

// Σ exp(x − top) in f32 lanes over blocks of 1024 values, each block's sum added in double (as
// in the AVX-512 twin).
double sum_exp(const float* x, long count, float top) {
  constexpr long kBlock = 1024;
  const __m256 shift = _mm256_set1_ps(top);
  double total = 0.0;
  for (long start = 0; start < count; start += kBlock) {
    const long end = start + kBlock < count ? start + kBlock : count;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    long i = start;
    for (; i + 16 <= end; i += 16) {
      s0 = _mm256_add_ps(s0, vm::exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift)));
      s1 = _mm256_add_ps(s1, vm::exp(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), shift)));
    }
    for (; i < end; i += 8) {
      const __m256i m = vm::first_lanes(end - i);
      const __m256 e = vm::exp(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), shift));
      s0 = _mm256_add_ps(s0, _mm256_and_ps(e, _mm256_castsi256_ps(m)));
    }
    total += static_cast<double>(vm::reduce_add(_mm256_add_ps(s0, s1)));
  }
  return total;
}

double log_sum_exp(const float* x, std::size_t n) {
  const long count = static_cast<long>(n);
  const float top = max_of(x, count);
  if (top == __builtin_inff() || top == -__builtin_inff()) return top;
  return static_cast<double>(top) + __builtin_log(sum_exp(x, count, top));
}

// The maximum first, then its first position.
std::size_t argmax(const float* x, std::size_t n) {
  const long count = static_cast<long>(n);
  const float best = max_of(x, count);
  const __m256 top = _mm256_set1_ps(best);
  long i = 0;
  for (; i + 8 <= count; i += 8) {
    const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), top, _CMP_EQ_OQ));
    if (hit != 0) return static_cast<std::size_t>(i + __builtin_ctz(static_cast<unsigned>(hit)));
  }
  for (; i < count; ++i) {
    if (x[i] == best) return static_cast<std::size_t>(i);
  }
  return 0;
}

}  // namespace

ElementwiseKernels avx2::elementwise_kernels() {
  return {rms_norm, add_rms_norm, add, silu_mul, rope, log_sum_exp, argmax};
}

}  // namespace kiln::kernels
