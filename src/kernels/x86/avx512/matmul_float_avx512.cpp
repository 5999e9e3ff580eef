// AVX-512 kernels for f32 activations (bf16 weights: matmul_bf16_avx512.cpp). Every scheme has
// one decoder (decode_block32: 32 columns of a 16-row tile to dequantised, scaled f32) used two
// ways: GEMV feeds the decoded vectors straight into FMA chains; GEMM decodes kBlockColumns
// columns into an L1 buffer once and reuses it for every activation row, with the tile's
// outputs accumulating in y across column blocks (one masked load/store per block).
#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "kernels/x86/avx512/avx512_tile_io.hpp"

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

// Decodes columns [k32, k32 + 32) of tile t and calls emit(j, w) for j = 0..31 in order, w the
// 16 rows' weights at column k32 + j. Inlined with j constant, so a caller's emit can pick a
// register accumulator by j.
template <WeightScheme S, typename Emit>
inline void decode_block32(const PackedWeights& w, std::size_t t, std::size_t k32, Emit&& emit) {
  const std::size_t k_padded = w.layout.k_padded;
  if constexpr (S == WeightScheme::kF32 || S == WeightScheme::kF16) {
    constexpr std::size_t kBytes = S == WeightScheme::kF32 ? 64 : 32;
    const std::uint8_t* col = w.data() + (t * k_padded + k32) * kBytes;
#pragma GCC unroll 32
    for (int j = 0; j < 32; ++j) {
      if constexpr (S == WeightScheme::kF32) {
        emit(j, _mm512_loadu_ps(reinterpret_cast<const float*>(col + j * kBytes)));
      } else {
        emit(j, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + j * kBytes))));
      }
    }
  } else if constexpr (is_4bit_scheme(S)) {
    const std::uint8_t* chunk = w.data() + t * k_padded * 8 + k32 * 8;  // 8 columns per 64 bytes
    const GroupScale gs = group_scale<S>(w, t, k32);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m512i v = _mm512_loadu_si512(chunk + c * 64);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) emit(8 * c + j, decode_nibbles<S>(_mm512_srli_epi32(v, 8 * j), gs));
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) emit(8 * c + 4 + j, decode_nibbles<S>(_mm512_srli_epi32(v, 8 * j + 4), gs));
    }
  } else {  // int8: u8 codes, w = u * scale - offset * scale
    const std::uint8_t* chunk = w.data() + t * k_padded * 16 + k32 * 16;  // 4 columns per 64 bytes
    const GroupScale gs = group_scale<S>(w, t, k32);
    const __m512i byte = _mm512_set1_epi32(0xFF);
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
      const __m512i v = _mm512_loadu_si512(chunk + c * 64);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m512 u = _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(v, 8 * j), byte));
        emit(4 * c + j, _mm512_fmsub_ps(u, gs.scale, gs.offset_scaled));
      }
    }
  }
}

// dst[(k - k0) * 16 + r] = W[16 t + r, k] for k in [k0, k1); k0, k1 multiples of 32.
template <WeightScheme S>
void decode_tile(const PackedWeights& w, std::size_t t, std::size_t k0, std::size_t k1, float* dst) {
  for (std::size_t k32 = k0; k32 < k1; k32 += 32) {
    float* out = dst + (k32 - k0) * 16;
    decode_block32<S>(w, t, k32, [&](int j, __m512 v) { _mm512_storeu_ps(out + j * 16, v); });
  }
}

// Decode (one activation row): weights go from the decoder straight into 8 FMA chains, never
// through memory. Columns past `in` meet zero activations from a padded copy of x's tail.
template <WeightScheme S>
void gemv_f32(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const std::size_t in = w.layout.in;
  const std::size_t full = in / 32 * 32;
  alignas(64) float tail[32];
  for (std::size_t i = 0; i < a.n; ++i) {
    const float* x = a.x + i * in;
    for (std::size_t k = 0; k < 32; ++k) tail[k] = full + k < in ? x[full + k] : 0.0f;
    for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
      __m512 acc[8];
      for (auto& v : acc) v = _mm512_setzero_ps();
      for (std::size_t k32 = 0; k32 < in; k32 += 32) {
        const float* xb = k32 < full ? x + k32 : tail;
        decode_block32<S>(w, t, k32,
                          [&](int j, __m512 v) { acc[j & 7] = _mm512_fmadd_ps(v, _mm512_set1_ps(xb[j]), acc[j & 7]); });
      }
      const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])),
                                       _mm512_add_ps(_mm512_add_ps(acc[4], acc[5]), _mm512_add_ps(acc[6], acc[7])));
      store_tile(a.y + i * a.y_stride, t, row_mask(t, row_begin, row_end), sum, a.bias);
    }
  }
}

// y rows i0 .. i0 + kRows, tile t: acc += Σ_k cols[k] * x[i, k] over k in [k0, k_end).
// With few rows, kSplit accumulators per row interleave k so the FMA latency (4 cycles) is not
// paid once per column (the last pass of an n that is not a multiple of kRowsPerPass).
template <int kRows>
void fma_rows(const float* cols, const MatmulArgs& a, std::size_t i0, std::size_t t, std::size_t k0, std::size_t k_end,
              bool first, __mmask16 mask, std::size_t in) {
  constexpr int kSplit = kRows == 1 ? 4 : kRows < 4 ? 2 : 1;
  __m512 acc[kRows][kSplit];
  const float* x[kRows];
  const __m512 init = first && a.bias ? _mm512_maskz_loadu_ps(mask, a.bias + t * kTileRows) : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) {
    float* y = a.y + (i0 + j) * a.y_stride + t * kTileRows;
    acc[j][0] = first ? init : _mm512_maskz_loadu_ps(mask, y);
    for (int s = 1; s < kSplit; ++s) acc[j][s] = _mm512_setzero_ps();
    x[j] = a.x + (i0 + j) * in + k0;  // [k_end - k0] from column k0
  }
  const std::size_t count = k_end - k0;
  std::size_t k = 0;
  for (; k + kSplit <= count; k += kSplit) {
#pragma GCC unroll 4
    for (int s = 0; s < kSplit; ++s) {
      const __m512 wk = _mm512_loadu_ps(cols + (k + s) * 16);
#pragma GCC unroll 8
      for (int j = 0; j < kRows; ++j) {
        acc[j][s] = _mm512_fmadd_ps(wk, _mm512_set1_ps(x[j][k + s]), acc[j][s]);
      }
    }
  }
  for (; k < count; ++k) {
    const __m512 wk = _mm512_loadu_ps(cols + k * 16);
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) acc[j][0] = _mm512_fmadd_ps(wk, _mm512_set1_ps(x[j][k]), acc[j][0]);
  }
#pragma GCC unroll 8
  for (int j = 0; j < kRows; ++j) {
    for (int s = 1; s < kSplit; ++s) acc[j][0] = _mm512_add_ps(acc[j][0], acc[j][s]);
    _mm512_mask_storeu_ps(a.y + (i0 + j) * a.y_stride + t * kTileRows, mask, acc[j][0]);
  }
}

void fma_all_rows(const float* cols, const MatmulArgs& a, std::size_t t, std::size_t k0, std::size_t k_end, bool first,
                  __mmask16 mask, std::size_t in) {
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
void matmul_f32(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
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

template <WeightScheme S>
void set_kernels(MatmulTable& table) {
  table.f32[scheme_index(S)] = {gemv_f32<S>, matmul_f32<S>};
}

void register_float_kernels(MatmulTable& table) {
  set_kernels<WeightScheme::kF32>(table);
  set_kernels<WeightScheme::kF16>(table);
  set_kernels<WeightScheme::kInt8Sym>(table);
  set_kernels<WeightScheme::kInt8Asym>(table);
  set_kernels<WeightScheme::kInt4Sym>(table);
  set_kernels<WeightScheme::kInt4Asym>(table);
  set_kernels<WeightScheme::kNf4>(table);
  register_bf16_kernels(table);
}

}  // namespace kiln::kernels::avx512
