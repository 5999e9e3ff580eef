// AVX-512 helpers shared by kiln's own ISA translation units (element-wise ops, attention):
// exp, horizontal reductions and tail masks. Everything has internal linkage (static inline), so including this in
// an AVX-512 translation unit emits no symbol that baseline code could bind to.
#pragma once

#include <immintrin.h>

namespace kiln::kernels::avx512_math {

// e^x in every lane, relative error below 2e-7 (Cephes' expf polynomial on x - n·ln2, then
// scaled by 2^n). Inputs below -87.3 give ~1e-38 instead of 0, above 88.7 give ~FLT_MAX.
static inline __m512 exp(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.33654f)), _mm512_set1_ps(88.72283f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// Horizontal sum / max / min. NOTE: GCC 12's unmasked AVX-512 shuffles (and the
// _mm512_reduce_*_ps built on them) pass _mm512_undefined_ps() and trip -Wuninitialized in its
// own headers; the masked forms with an all-ones mask compile to the same instructions.
static inline __m512 swap_halves(__m512 v) { return _mm512_mask_shuffle_f32x4(v, 0xFFFF, v, v, 0x4E); }
static inline __m512 swap_quarters(__m512 v) { return _mm512_mask_shuffle_f32x4(v, 0xFFFF, v, v, 0xB1); }
static inline __m512 swap_pairs(__m512 v) { return _mm512_mask_permute_ps(v, 0xFFFF, v, 0x4E); }
static inline __m512 swap_neighbours(__m512 v) { return _mm512_mask_permute_ps(v, 0xFFFF, v, 0xB1); }

static inline __m512 fold_lanes_add(__m512 v) {
  v = _mm512_add_ps(v, swap_halves(v));
  v = _mm512_add_ps(v, swap_quarters(v));
  v = _mm512_add_ps(v, swap_pairs(v));
  return _mm512_add_ps(v, swap_neighbours(v));
}
static inline float reduce_add(__m512 v) { return _mm512_cvtss_f32(fold_lanes_add(v)); }

static inline float reduce_max(__m512 v) {
  v = _mm512_max_ps(v, swap_halves(v));
  v = _mm512_max_ps(v, swap_quarters(v));
  v = _mm512_max_ps(v, swap_pairs(v));
  return _mm512_cvtss_f32(_mm512_max_ps(v, swap_neighbours(v)));
}

static inline float reduce_min(__m512 v) {
  v = _mm512_min_ps(v, swap_halves(v));
  v = _mm512_min_ps(v, swap_quarters(v));
  v = _mm512_min_ps(v, swap_pairs(v));
  return _mm512_cvtss_f32(_mm512_min_ps(v, swap_neighbours(v)));
}

// A mask of the first `count` lanes (count <= 16).
static inline __mmask16 first_lanes(long count) {
  return static_cast<__mmask16>(count >= 16 ? 0xFFFF : (1u << count) - 1u);
}

}  // namespace kiln::kernels::avx512_math
