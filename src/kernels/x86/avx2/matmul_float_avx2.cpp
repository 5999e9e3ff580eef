// AVX2 kernels for f32 activations, the same structure as the AVX-512 ones: an 8-row tile is
// decoded kBlockColumns columns at a time into f32 columns (dequantised and scaled) that feed
// f32 FMAs for every activation row; f32 weights are used in place. bf16 weights are widened
// exactly and multiplied by activations rounded to bf16 (RNE), which is the vdpbf16ps
// arithmetic without the instruction.
#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx2/avx2_tile_io.hpp"
#include "kernels/x86/avx2/matmul_avx2.hpp"

namespace kiln::kernels::avx2 {
namespace {

constexpr std::size_t kBlockColumns = 256;  // 8 KB of decoded f32 per tile
constexpr int kRowsPerPass = 6;             // 6 accumulators + weights + broadcasts < 16 ymm

struct GroupScale {
  __m256 scale;
  __m256 offset_scaled;  // w = stored * scale - offset_scaled
};

template <WeightScheme S>
GroupScale group_scale(const PackedWeights& w, std::size_t t, std::size_t k) {
  const std::size_t index = (t * w.layout.groups + k / w.layout.group_size) * kTileRows;
  const __m256 scale = load_scales(w.scales() + index);
  __m256 offset = _mm256_setzero_ps();
  if constexpr (S == WeightScheme::kInt4Sym) offset = _mm256_set1_ps(8.0f);
  if constexpr (S == WeightScheme::kInt4Asym) offset = _mm256_cvtepi32_ps(load_zero_points(w.zeros() + index));
  if constexpr (S == WeightScheme::kInt8Asym) {  // stored code - 128
    offset = _mm256_cvtepi32_ps(_mm256_sub_epi32(load_zero_points(w.zeros() + index), _mm256_set1_epi32(128)));
  }
  return GroupScale{scale, _mm256_mul_ps(offset, scale)};
}

// 8 lanes of u4 codes (bits 0..3 of each lane of `idx`, higher bits arbitrary) to weights.
template <WeightScheme S>
inline __m256 decode_nibbles(__m256i idx, const GroupScale& gs) {
  if constexpr (S == WeightScheme::kNf4) {
    const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(kNf4Levels.data()), idx);
    const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(kNf4Levels.data() + 8), idx);
    const __m256 level = _mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28)));
    return _mm256_mul_ps(level, gs.scale);
  } else {
    const __m256 u = _mm256_cvtepi32_ps(_mm256_and_si256(idx, _mm256_set1_epi32(0xF)));
    return _mm256_fmsub_ps(u, gs.scale, gs.offset_scaled);
  }
}

// dst[(k - k0) * 8 + r] = W[8 t + r, k] for k in [k0, k1); k0, k1 multiples of 32.
template <WeightScheme S>
void decode_tile(const PackedWeights& w, std::size_t t, std::size_t k0, std::size_t k1, float* dst) {
  const std::size_t k_padded = w.layout.k_padded;
  if constexpr (S == WeightScheme::kF16) {
    const std::uint8_t* tile = w.data() + t * k_padded * 16;
    for (std::size_t k = k0; k < k1; ++k) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tile + k * 16));
      _mm256_storeu_ps(dst + (k - k0) * 8, _mm256_cvtph_ps(h));
    }
  } else if constexpr (S == WeightScheme::kBf16) {
    const std::uint8_t* tile = w.data() + t * k_padded * 16;
    const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
    for (std::size_t k = k0; k < k1; k += 2) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + k * 16));
      _mm256_storeu_ps(dst + (k - k0) * 8, _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)));
      _mm256_storeu_ps(dst + (k + 1 - k0) * 8, _mm256_castsi256_ps(_mm256_and_si256(v, high)));
    }
  } else if constexpr (is_4bit_scheme(S)) {
    const std::uint8_t* tile = w.data() + t * k_padded * 4;
    for (std::size_t k32 = k0; k32 < k1; k32 += 32) {
      const GroupScale gs = group_scale<S>(w, t, k32);
      for (std::size_t k = k32; k < k32 + 32; k += 8) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + k * 4));
        float* out = dst + (k - k0) * 8;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          _mm256_storeu_ps(out + j * 8, decode_nibbles<S>(_mm256_srli_epi32(v, 8 * j), gs));
          _mm256_storeu_ps(out + (j + 4) * 8, decode_nibbles<S>(_mm256_srli_epi32(v, 8 * j + 4), gs));
        }
      }
    }
  } else {  // int8, stored as s8
    const std::uint8_t* tile = w.data() + t * k_padded * 8;
    for (std::size_t k32 = k0; k32 < k1; k32 += 32) {
      const GroupScale gs = group_scale<S>(w, t, k32);
      for (std::size_t k = k32; k < k32 + 32; k += 4) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + k * 8));
        float* out = dst + (k - k0) * 8;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          const __m256i code = _mm256_srai_epi32(_mm256_slli_epi32(v, 24 - 8 * j), 24);
          _mm256_storeu_ps(out + j * 8, _mm256_fmsub_ps(_mm256_cvtepi32_ps(code), gs.scale, gs.offset_scaled));
        }
      }
    }
  }
}

// x rounded to bf16 (RNE, as f32_to_bf16) and widened back: the bf16 family's activations.
void round_to_bf16(const float* x, std::size_t count, float* out) {
  const __m256i bias = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1);
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  std::size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(x + k));
    const __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, bias), _mm256_and_si256(_mm256_srli_epi32(u, 16), one));
    _mm256_storeu_ps(out + k, _mm256_castsi256_ps(_mm256_and_si256(r, high)));
  }
  for (; k < count; ++k) {
    std::uint32_t u;
    __builtin_memcpy(&u, x + k, 4);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    __builtin_memcpy(out + k, &u, 4);
  }
}

// y rows i0 .. i0 + kRows of tile t += Σ_k cols[k] * x[i, k] over k in [k0, k_end).
template <int kRows, bool kBf16>
void fma_rows(const float* cols, const MatmulArgs& a, std::size_t i0, std::size_t t, std::size_t k0,
              std::size_t k_end, bool first, __m256i mask, std::size_t in) {
  __m256 acc[kRows];
  const float* x[kRows];
  alignas(32) float rounded[kBf16 ? kRows : 1][kBf16 ? kBlockColumns : 1];
  const __m256 init = first && a.bias ? load_rows(a.bias + t * kTileRows, mask) : _mm256_setzero_ps();
  for (int j = 0; j < kRows; ++j) {
    acc[j] = first ? init : load_rows(a.y + (i0 + j) * a.y_stride + t * kTileRows, mask);
    x[j] = a.x + (i0 + j) * in + k0;  // [k_end - k0] from column k0
    if constexpr (kBf16) {
      round_to_bf16(x[j], k_end - k0, rounded[j]);
      x[j] = rounded[j];
    }
  }
  for (std::size_t k = 0; k < k_end - k0; ++k) {
    const __m256 wk = _mm256_loadu_ps(cols + k * 8);
#pragma GCC unroll 6
    for (int j = 0; j < kRows; ++j) acc[j] = _mm256_fmadd_ps(wk, _mm256_set1_ps(x[j][k]), acc[j]);
  }
#pragma GCC unroll 6
  for (int j = 0; j < kRows; ++j) {
    _mm256_maskstore_ps(a.y + (i0 + j) * a.y_stride + t * kTileRows, mask, acc[j]);
  }
}

template <bool kBf16>
void fma_all_rows(const float* cols, const MatmulArgs& a, std::size_t t, std::size_t k0,
                  std::size_t k_end, bool first, __m256i mask, std::size_t in) {
  std::size_t i = 0;
  for (; i + kRowsPerPass <= a.n; i += kRowsPerPass) {
    fma_rows<kRowsPerPass, kBf16>(cols, a, i, t, k0, k_end, first, mask, in);
  }
  switch (a.n - i) {
    case 5: fma_rows<5, kBf16>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 4: fma_rows<4, kBf16>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 3: fma_rows<3, kBf16>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 2: fma_rows<2, kBf16>(cols, a, i, t, k0, k_end, first, mask, in); break;
    case 1: fma_rows<1, kBf16>(cols, a, i, t, k0, k_end, first, mask, in); break;
    default: break;
  }
}

template <WeightScheme S>
void matmul_f32(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin,
                std::size_t row_end) {
  const std::size_t in = w.layout.in;
  alignas(32) float cols[kBlockColumns * kTileRows];  // [k][8]
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
    const __m256i mask = row_mask(t, row_begin, row_end);
    for (std::size_t k0 = 0; k0 < in; k0 += kBlockColumns) {
      const std::size_t k_end = std::min(k0 + kBlockColumns, in);
      const float* block = cols;
      if constexpr (S == WeightScheme::kF32) {
        block = reinterpret_cast<const float*>(w.data()) + (t * w.layout.k_padded + k0) * kTileRows;
      } else {
        decode_tile<S>(w, t, k0, (k_end + 31) / 32 * 32, cols);
      }
      fma_all_rows<S == WeightScheme::kBf16>(block, a, t, k0, k_end, k0 == 0, mask, in);
    }
  }
}

}  // namespace

void register_float_kernels(MatmulTable& table) {
  auto set = [&](WeightScheme s, MatmulFn fn) { table.f32[scheme_index(s)] = {fn, fn}; };
  set(WeightScheme::kF32, matmul_f32<WeightScheme::kF32>);
  set(WeightScheme::kF16, matmul_f32<WeightScheme::kF16>);
  set(WeightScheme::kBf16, matmul_f32<WeightScheme::kBf16>);
  set(WeightScheme::kInt8Sym, matmul_f32<WeightScheme::kInt8Sym>);
  set(WeightScheme::kInt8Asym, matmul_f32<WeightScheme::kInt8Asym>);
  set(WeightScheme::kInt4Sym, matmul_f32<WeightScheme::kInt4Sym>);
  set(WeightScheme::kInt4Asym, matmul_f32<WeightScheme::kInt4Asym>);
  set(WeightScheme::kNf4, matmul_f32<WeightScheme::kNf4>);
}

}  // namespace kiln::kernels::avx2
