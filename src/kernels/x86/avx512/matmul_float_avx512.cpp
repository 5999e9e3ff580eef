// AVX-512 kernels for f32 activations: every weight scheme is decoded, one 16-row tile and
// kBlockColumns columns at a time, into f32 columns (dequantised and scaled), which then feed
// f32 FMAs for every activation row; f32 weights are used in place. bf16 weights instead keep
// their pairs and use vdpbf16ps with activations rounded to bf16.
// Output rows of a tile accumulate in y across column blocks (one masked load/store per block),
// so a decoded block is reused by all n activation rows.
#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx512/avx512_tile_io.hpp"
#include "kernels/x86/avx512/matmul_avx512.hpp"

namespace kiln::kernels::avx512 {
namespace {

constexpr std::size_t kBlockColumns = 256;  // 16 KB of decoded f32: stays in L1
constexpr int kRowsPerPass = 8;             // activation rows per FMA pass (8 accumulators)

// The group's scale and, for codes stored with an offset, offset * scale, so that
// w = u * scale - offset_scaled is one FMA.
struct GroupScale {
  __m512 scale;
  __m512 offset_scaled;
};

template <WeightScheme S>
GroupScale group_scale(const PackedWeights& w, std::size_t t, std::size_t k) {
  const std::size_t index = (t * w.layout.groups + k / w.layout.group_size) * kTileRows;
  const __m512 scale = load_scales(w.scales() + index);
  __m512 offset = _mm512_setzero_ps();
  if constexpr (S == WeightScheme::kInt8Sym) offset = _mm512_set1_ps(128.0f);
  if constexpr (has_zero_points(S)) offset = _mm512_cvtepi32_ps(load_zero_points(w.zeros() + index));
  return GroupScale{scale, _mm512_mul_ps(offset, scale)};
}

// 16 lanes of 4-bit codes (the low nibble of each 32-bit lane of `idx` selects) to weights.
template <WeightScheme S>
inline __m512 decode_nibbles(__m512i idx, const GroupScale& gs) {
  if constexpr (S == WeightScheme::kInt4Asym) {
    const __m512 u = _mm512_cvtepi32_ps(_mm512_and_si512(idx, _mm512_set1_epi32(0xF)));
    return _mm512_fmsub_ps(u, gs.scale, gs.offset_scaled);
  } else {
    // int4_sym stores code + 8: the table maps u to u - 8. nf4 maps the index to its level.
    const __m512 table = S == WeightScheme::kNf4
                             ? _mm512_loadu_ps(kNf4Levels.data())
                             : _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
    return _mm512_mul_ps(_mm512_permutexvar_ps(idx, table), gs.scale);
  }
}

// dst[(k - k0) * 16 + r] = W[16 t + r, k] for k in [k0, k1); k0, k1 multiples of 32.
template <WeightScheme S>
void decode_tile(const PackedWeights& w, std::size_t t, std::size_t k0, std::size_t k1, float* dst) {
  const std::size_t k_padded = w.layout.k_padded;
  if constexpr (S == WeightScheme::kF16) {
    const std::uint8_t* tile = w.data() + t * k_padded * 32;
    for (std::size_t k = k0; k < k1; ++k) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + k * 32));
      _mm512_storeu_ps(dst + (k - k0) * 16, _mm512_cvtph_ps(h));
    }
  } else if constexpr (is_4bit_scheme(S)) {
    const std::uint8_t* tile = w.data() + t * k_padded * 8;
    for (std::size_t k32 = k0; k32 < k1; k32 += 32) {
      const GroupScale gs = group_scale<S>(w, t, k32);
      for (std::size_t k = k32; k < k32 + 32; k += 8) {
        const __m512i v = _mm512_loadu_si512(tile + k * 8);
        float* out = dst + (k - k0) * 16;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          _mm512_storeu_ps(out + j * 16, decode_nibbles<S>(_mm512_srli_epi32(v, 8 * j), gs));
          _mm512_storeu_ps(out + (j + 4) * 16, decode_nibbles<S>(_mm512_srli_epi32(v, 8 * j + 4), gs));
        }
      }
    }
  } else {  // int8: u8 codes, w = u * scale - offset * scale
    const std::uint8_t* tile = w.data() + t * k_padded * 16;
    const __m512i byte = _mm512_set1_epi32(0xFF);
    for (std::size_t k32 = k0; k32 < k1; k32 += 32) {
      const GroupScale gs = group_scale<S>(w, t, k32);
      for (std::size_t k = k32; k < k32 + 32; k += 4) {
        const __m512i v = _mm512_loadu_si512(tile + k * 16);
        float* out = dst + (k - k0) * 16;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          const __m512 u = _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(v, 8 * j), byte));
          _mm512_storeu_ps(out + j * 16, _mm512_fmsub_ps(u, gs.scale, gs.offset_scaled));
        }
      }
    }
  }
}

// y rows i0 .. i0 + kRows, tile t: acc += Σ_k cols[k] * x[i, k] over k in [k0, k_end).
template <int kRows>
void fma_rows(const float* cols, const MatmulArgs& a, std::size_t i0, std::size_t t,
              std::size_t k0, std::size_t k_end, bool first, __mmask16 mask, std::size_t in) {
  __m512 acc[kRows];
  const float* x[kRows];
  const __m512 init = first && a.bias ? _mm512_maskz_loadu_ps(mask, a.bias + t * kTileRows)
                                      : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) {
    float* y = a.y + (i0 + j) * a.y_stride + t * kTileRows;
    acc[j] = first ? init : _mm512_maskz_loadu_ps(mask, y);
    x[j] = a.x + (i0 + j) * in + k0;  // [k_end - k0] from column k0
  }
  for (std::size_t k = 0; k < k_end - k0; ++k) {
    const __m512 wk = _mm512_loadu_ps(cols + k * 16);
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) acc[j] = _mm512_fmadd_ps(wk, _mm512_set1_ps(x[j][k]), acc[j]);
  }
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) {
    _mm512_mask_storeu_ps(a.y + (i0 + j) * a.y_stride + t * kTileRows, mask, acc[j]);
  }
}

void fma_all_rows(const float* cols, const MatmulArgs& a, std::size_t t, std::size_t k0,
                  std::size_t k_end, bool first, __mmask16 mask, std::size_t in) {
  std::size_t i = 0;
  for (; i + kRowsPerPass <= a.n; i += kRowsPerPass) {
    fma_rows<kRowsPerPass>(cols, a, i, t, k0, k_end, first, mask, in);
  }
  switch (a.n - i) {
    case 7: fma_rows<7>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 6: fma_rows<6>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 5: fma_rows<5>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 4: fma_rows<4>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 3: fma_rows<3>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 2: fma_rows<2>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 1: fma_rows<1>(cols, a, i, t, k0, k_end, first, mask, in); break;
    default: break;
  }
}

template <WeightScheme S>
void matmul_f32(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin,
                std::size_t row_end) {
  const std::size_t in = w.layout.in;
  alignas(64) float cols[kBlockColumns * kTileRows];  // [k][16]
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
    const __mmask16 mask = row_mask(t, row_begin, row_end);
    for (std::size_t k0 = 0; k0 < in; k0 += kBlockColumns) {
      const std::size_t k_end = std::min(k0 + kBlockColumns, in);
      const float* block = cols;
      if constexpr (S == WeightScheme::kF32) {
        block = reinterpret_cast<const float*>(w.data()) + (t * w.layout.k_padded + k0) * kTileRows;
      } else {
        decode_tile<S>(w, t, k0, (k_end + 31) / 32 * 32, cols);
      }
      fma_all_rows(block, a, t, k0, k_end, k0 == 0, mask, in);
    }
  }
}

}  // namespace

void register_bf16_kernels(MatmulTable& table);

void register_float_kernels(MatmulTable& table) {
  auto set = [&](WeightScheme s, MatmulFn fn) { table.f32[scheme_index(s)] = {fn, fn}; };
  set(WeightScheme::kF32, matmul_f32<WeightScheme::kF32>);
  set(WeightScheme::kF16, matmul_f32<WeightScheme::kF16>);
  set(WeightScheme::kInt8Sym, matmul_f32<WeightScheme::kInt8Sym>);
  set(WeightScheme::kInt8Asym, matmul_f32<WeightScheme::kInt8Asym>);
  set(WeightScheme::kInt4Sym, matmul_f32<WeightScheme::kInt4Sym>);
  set(WeightScheme::kInt4Asym, matmul_f32<WeightScheme::kInt4Asym>);
  set(WeightScheme::kNf4, matmul_f32<WeightScheme::kNf4>);
  register_bf16_kernels(table);
}

}  // namespace kiln::kernels::avx512
