// AVX2 kernels for f32 activations, the same structure as the AVX-512 ones: one decoder per
// scheme (32 columns of an 8-row tile to dequantised, scaled f32) feeds FMA chains directly in
// GEMV, and an L1 buffer of kBlockColumns columns reused by every activation row in GEMM. bf16 weights are widened
// exactly and multiplied by activations rounded to bf16 (RNE), which is the vdpbf16ps
// arithmetic without the instruction.
#include <immintrin.h>

#include "kernels/matmul.hpp"
#include "kernels/x86/avx2/avx2_kernels.hpp"
#include "kernels/x86/avx2/avx2_tile_io.hpp"

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

// Decodes columns [k32, k32 + 32) of tile t and calls emit(j, w) for j = 0..31 in order, w the
// 8 rows' weights at column k32 + j (inlined: j is a constant in the caller's emit).
template <WeightScheme S, typename Emit>
inline void decode_block32(const PackedWeights& w, std::size_t t, std::size_t k32, Emit&& emit) {
  const std::size_t k_padded = w.layout.k_padded;
  if constexpr (S == WeightScheme::kF32) {
    const float* col = reinterpret_cast<const float*>(w.data()) + (t * k_padded + k32) * 8;
#pragma GCC unroll 32
    for (int j = 0; j < 32; ++j) emit(j, _mm256_loadu_ps(col + j * 8));
  } else if constexpr (S == WeightScheme::kF16) {
    const std::uint8_t* col = w.data() + (t * k_padded + k32) * 16;
#pragma GCC unroll 32
    for (int j = 0; j < 32; ++j) {
      emit(j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(col + j * 16))));
    }
  } else if constexpr (S == WeightScheme::kBf16) {
    const std::uint8_t* pair = w.data() + (t * k_padded + k32) * 16;  // 2 columns per 32 bytes
    const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
#pragma GCC unroll 16
    for (int p = 0; p < 16; ++p) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair + p * 32));
      emit(2 * p, _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)));
      emit(2 * p + 1, _mm256_castsi256_ps(_mm256_and_si256(v, high)));
    }
  } else if constexpr (is_4bit_scheme(S)) {
    const std::uint8_t* chunk = w.data() + (t * k_padded + k32) * 4;  // 8 columns per 32 bytes
    const GroupScale gs = group_scale<S>(w, t, k32);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunk + c * 32));
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) emit(8 * c + j, decode_nibbles<S>(_mm256_srli_epi32(v, 8 * j), gs));
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) emit(8 * c + 4 + j, decode_nibbles<S>(_mm256_srli_epi32(v, 8 * j + 4), gs));
    }
  } else {                                                            // int8, stored as s8
    const std::uint8_t* chunk = w.data() + (t * k_padded + k32) * 8;  // 4 columns per 32 bytes
    const GroupScale gs = group_scale<S>(w, t, k32);
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunk + c * 32));
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m256i code = _mm256_srai_epi32(_mm256_slli_epi32(v, 24 - 8 * j), 24);
        emit(4 * c + j, _mm256_fmsub_ps(_mm256_cvtepi32_ps(code), gs.scale, gs.offset_scaled));
      }
    }
  }
}

// dst[(k - k0) * 8 + r] = W[8 t + r, k] for k in [k0, k1); k0, k1 multiples of 32.
template <WeightScheme S>
void decode_tile(const PackedWeights& w, std::size_t t, std::size_t k0, std::size_t k1, float* dst) {
  for (std::size_t k32 = k0; k32 < k1; k32 += 32) {
    float* out = dst + (k32 - k0) * 8;
    decode_block32<S>(w, t, k32, [&](int j, __m256 v) { _mm256_storeu_ps(out + j * 8, v); });
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

// Decode (one activation row): decoded weights go straight into 8 FMA chains. Columns past
// `in` meet zero activations from a padded copy of x's tail; bf16 weights meet bf16-rounded x.
template <WeightScheme S>
void gemv_f32(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const std::size_t in = w.layout.in;
  alignas(32) float xb[32];
  for (std::size_t i = 0; i < a.n; ++i) {
    const float* x = a.x + i * in;
    for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
      __m256 acc[8];
      for (auto& v : acc) v = _mm256_setzero_ps();
      for (std::size_t k32 = 0; k32 < in; k32 += 32) {
        const std::size_t count = std::min<std::size_t>(32, in - k32);
        const float* xk = x + k32;
        if (S == WeightScheme::kBf16 || count < 32) {
          for (std::size_t k = count; k < 32; ++k) xb[k] = 0.0f;
          if constexpr (S == WeightScheme::kBf16) {
            round_to_bf16(xk, count, xb);
          } else {
            for (std::size_t k = 0; k < count; ++k) xb[k] = xk[k];
          }
          xk = xb;
        }
        decode_block32<S>(w, t, k32,
                          [&](int j, __m256 v) { acc[j & 7] = _mm256_fmadd_ps(v, _mm256_set1_ps(xk[j]), acc[j & 7]); });
      }
      const __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])),
                                       _mm256_add_ps(_mm256_add_ps(acc[4], acc[5]), _mm256_add_ps(acc[6], acc[7])));
      store_tile(a.y + i * a.y_stride, t, row_mask(t, row_begin, row_end), sum, a.bias);
    }
  }
}

// y rows i0 .. i0 + kRows of tile t += Σ_k cols[k] * x[i, k] over k in [k0, k_end). With few
// rows, kSplit accumulators per row interleave k to hide the FMA latency.
template <int kRows, bool kBf16>
void fma_rows(const float* cols, const MatmulArgs& a, std::size_t i0, std::size_t t, std::size_t k0, std::size_t k_end,
              bool first, __m256i mask, std::size_t in) {
  constexpr int kSplit = kRows == 1 ? 4 : kRows < 4 ? 2 : 1;
  __m256 acc[kRows][kSplit];
  const float* x[kRows];
  alignas(32) float rounded[kBf16 ? kRows : 1][kBf16 ? kBlockColumns : 1];
  const __m256 init = first && a.bias ? load_rows(a.bias + t * kTileRows, mask) : _mm256_setzero_ps();
  for (int j = 0; j < kRows; ++j) {
    acc[j][0] = first ? init : load_rows(a.y + (i0 + j) * a.y_stride + t * kTileRows, mask);
    for (int s = 1; s < kSplit; ++s) acc[j][s] = _mm256_setzero_ps();
    x[j] = a.x + (i0 + j) * in + k0;  // [k_end - k0] from column k0
    if constexpr (kBf16) {
      round_to_bf16(x[j], k_end - k0, rounded[j]);
      x[j] = rounded[j];
    }
  }
  const std::size_t count = k_end - k0;
  std::size_t k = 0;
  for (; k + kSplit <= count; k += kSplit) {
#pragma GCC unroll 4
    for (int s = 0; s < kSplit; ++s) {
      const __m256 wk = _mm256_loadu_ps(cols + (k + s) * 8);
#pragma GCC unroll 6
      for (int j = 0; j < kRows; ++j) {
        acc[j][s] = _mm256_fmadd_ps(wk, _mm256_set1_ps(x[j][k + s]), acc[j][s]);
      }
    }
  }
  for (; k < count; ++k) {
    const __m256 wk = _mm256_loadu_ps(cols + k * 8);
#pragma GCC unroll 6
    for (int j = 0; j < kRows; ++j) acc[j][0] = _mm256_fmadd_ps(wk, _mm256_set1_ps(x[j][k]), acc[j][0]);
  }
#pragma GCC unroll 6
  for (int j = 0; j < kRows; ++j) {
    for (int s = 1; s < kSplit; ++s) acc[j][0] = _mm256_add_ps(acc[j][0], acc[j][s]);
    _mm256_maskstore_ps(a.y + (i0 + j) * a.y_stride + t * kTileRows, mask, acc[j][0]);
  }
}

template <bool kBf16>
void fma_all_rows(const float* cols, const MatmulArgs& a, std::size_t t, std::size_t k0, std::size_t k_end, bool first,
                  __m256i mask, std::size_t in) {
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

// Two tiles at once, kRowsPerPass activation rows: 12 accumulators, and per k two weight loads
// and six broadcasts feed 12 FMAs (one tile alone feeds 6 FMAs with 7 loads and has too few
// chains to hide the FMA latency). Each output is the same FMA chain in k order as
// fma_rows<kRowsPerPass>, so the result does not depend on which path a row takes.
void fma_rows_two_tiles(const float* cols0, const float* cols1, const MatmulArgs& a, std::size_t i0, std::size_t t,
                        std::size_t k0, std::size_t k_end, bool first, __m256i mask0, __m256i mask1, std::size_t in) {
  constexpr int kRows = kRowsPerPass;
  __m256 acc0[kRows], acc1[kRows];
  const float* x[kRows];
  const __m256 init0 = first && a.bias ? load_rows(a.bias + t * kTileRows, mask0) : _mm256_setzero_ps();
  const __m256 init1 = first && a.bias ? load_rows(a.bias + (t + 1) * kTileRows, mask1) : _mm256_setzero_ps();
  for (int j = 0; j < kRows; ++j) {
    float* y = a.y + (i0 + j) * a.y_stride + t * kTileRows;
    acc0[j] = first ? init0 : load_rows(y, mask0);
    acc1[j] = first ? init1 : load_rows(y + kTileRows, mask1);
    x[j] = a.x + (i0 + j) * in + k0;  // [k_end - k0] from column k0
  }
  const std::size_t count = k_end - k0;
  for (std::size_t k = 0; k < count; ++k) {
    const __m256 w0 = _mm256_loadu_ps(cols0 + k * 8);
    const __m256 w1 = _mm256_loadu_ps(cols1 + k * 8);
#pragma GCC unroll 6
    for (int j = 0; j < kRows; ++j) {
      const __m256 xk = _mm256_set1_ps(x[j][k]);
      acc0[j] = _mm256_fmadd_ps(w0, xk, acc0[j]);
      acc1[j] = _mm256_fmadd_ps(w1, xk, acc1[j]);
    }
  }
#pragma GCC unroll 6
  for (int j = 0; j < kRows; ++j) {
    float* y = a.y + (i0 + j) * a.y_stride + t * kTileRows;
    _mm256_maskstore_ps(y, mask0, acc0[j]);
    _mm256_maskstore_ps(y + kTileRows, mask1, acc1[j]);
  }
}

// Tiles t and t + 1 over every activation row: full passes of kRowsPerPass rows take both tiles
// together, the last n % kRowsPerPass rows each tile alone.
void fma_all_rows_two_tiles(const float* cols0, const float* cols1, const MatmulArgs& a, std::size_t t, std::size_t k0,
                            std::size_t k_end, bool first, __m256i mask0, __m256i mask1, std::size_t in) {
  std::size_t i = 0;
  for (; i + kRowsPerPass <= a.n; i += kRowsPerPass) {
    fma_rows_two_tiles(cols0, cols1, a, i, t, k0, k_end, first, mask0, mask1, in);
  }
  if (i == a.n) return;
  MatmulArgs rest = a;
  rest.n = a.n - i;
  rest.x = a.x + i * in;
  rest.y = a.y + i * a.y_stride;
  fma_all_rows<false>(cols0, rest, t, k0, k_end, first, mask0, in);
  fma_all_rows<false>(cols1, rest, t + 1, k0, k_end, first, mask1, in);
}

template <WeightScheme S>
void matmul_f32(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const std::size_t in = w.layout.in;
  alignas(32) float cols[2][kBlockColumns * kTileRows];  // two tiles' [k][8]
  const auto block_of = [&](std::size_t t, std::size_t k0, std::size_t k_end, float* buffer) -> const float* {
    if constexpr (S == WeightScheme::kF32) {
      return reinterpret_cast<const float*>(w.data()) + (t * w.layout.k_padded + k0) * kTileRows;
    } else {
      decode_tile<S>(w, t, k0, (k_end + 31) / 32 * 32, buffer);
      return buffer;
    }
  };
  std::size_t t = row_begin / kTileRows;
  if constexpr (S != WeightScheme::kBf16) {          // bf16 activations are rounded per row: one tile at a time
    for (; (t + 1) * kTileRows < row_end; t += 2) {  // both tiles hold rows of the range
      const __m256i mask0 = row_mask(t, row_begin, row_end), mask1 = row_mask(t + 1, row_begin, row_end);
      for (std::size_t k0 = 0; k0 < in; k0 += kBlockColumns) {
        const std::size_t k_end = std::min(k0 + kBlockColumns, in);
        const float* block0 = block_of(t, k0, k_end, cols[0]);
        const float* block1 = block_of(t + 1, k0, k_end, cols[1]);
        fma_all_rows_two_tiles(block0, block1, a, t, k0, k_end, k0 == 0, mask0, mask1, in);
      }
    }
  }
  for (; t * kTileRows < row_end; ++t) {
    const __m256i mask = row_mask(t, row_begin, row_end);
    for (std::size_t k0 = 0; k0 < in; k0 += kBlockColumns) {
      const std::size_t k_end = std::min(k0 + kBlockColumns, in);
      fma_all_rows<S == WeightScheme::kBf16>(block_of(t, k0, k_end, cols[0]), a, t, k0, k_end, k0 == 0, mask, in);
    }
  }
}

}  // namespace

// bf16 weights, many rows: activations are rounded to bf16 once per block of kBf16Rows rows ×
// kBf16Columns columns and that block meets every tile (the tile's slice, 1 KB, is reused from
// L1 by each group of 4 rows). Weight pairs are widened in registers; even and odd columns feed
// separate accumulators, so 4 rows make 8 FMA chains.
constexpr std::size_t kBf16Rows = 32, kBf16Columns = 64;

template <int kRows>
void bf16_rows(const std::uint8_t* pairs_of_tile, std::size_t pairs, const float (*x)[kBf16Columns], float* y,
               std::size_t y_stride, __m256 init, bool first, __m256i mask) {
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  __m256 even[kRows], odd[kRows];
  for (int j = 0; j < kRows; ++j) {
    even[j] = first ? init : load_rows(y + j * y_stride, mask);
    odd[j] = _mm256_setzero_ps();
  }
  for (std::size_t p = 0; p < pairs; ++p) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pairs_of_tile + p * 32));
    const __m256 w_even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    const __m256 w_odd = _mm256_castsi256_ps(_mm256_and_si256(v, high));
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) {
      even[j] = _mm256_fmadd_ps(w_even, _mm256_set1_ps(x[j][2 * p]), even[j]);
      odd[j] = _mm256_fmadd_ps(w_odd, _mm256_set1_ps(x[j][2 * p + 1]), odd[j]);
    }
  }
  for (int j = 0; j < kRows; ++j) _mm256_maskstore_ps(y + j * y_stride, mask, _mm256_add_ps(even[j], odd[j]));
}

void gemm_bf16(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const std::size_t in = w.layout.in;
  alignas(32) float x[kBf16Rows][kBf16Columns];  // [rows, columns]: bf16-rounded, zero-padded
  for (std::size_t i0 = 0; i0 < a.n; i0 += kBf16Rows) {
    const std::size_t rows = std::min(kBf16Rows, a.n - i0);
    for (std::size_t k0 = 0; k0 < in; k0 += kBf16Columns) {
      const std::size_t count = std::min(kBf16Columns, in - k0);
      for (std::size_t j = 0; j < rows; ++j) {
        round_to_bf16(a.x + (i0 + j) * in + k0, count, x[j]);
        for (std::size_t k = count; k < kBf16Columns; ++k) x[j][k] = 0.0f;
      }
      const std::size_t pairs = (count + 1) / 2;
      for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end; ++t) {
        const __m256i mask = row_mask(t, row_begin, row_end);
        const std::uint8_t* tile = w.data() + (t * w.layout.k_padded + k0) * 16;  // 32 B per pair
        const __m256 init = a.bias ? load_rows(a.bias + t * kTileRows, mask) : _mm256_setzero_ps();
        float* y = a.y + i0 * a.y_stride + t * kTileRows;
        std::size_t j = 0;
        for (; j + 4 <= rows; j += 4)
          bf16_rows<4>(tile, pairs, x + j, y + j * a.y_stride, a.y_stride, init, k0 == 0, mask);
        switch (rows - j) {
          case 3: bf16_rows<3>(tile, pairs, x + j, y + j * a.y_stride, a.y_stride, init, k0 == 0, mask); break;
          case 2: bf16_rows<2>(tile, pairs, x + j, y + j * a.y_stride, a.y_stride, init, k0 == 0, mask); break;
          case 1: bf16_rows<1>(tile, pairs, x + j, y + j * a.y_stride, a.y_stride, init, k0 == 0, mask); break;
          default: break;
        }
      }
    }
  }
}

template <WeightScheme S>
void set_kernels(MatmulTable& table) {
  if constexpr (S == WeightScheme::kBf16) {
    table.f32[scheme_index(S)] = {gemv_f32<S>, gemm_bf16};
  } else {
    table.f32[scheme_index(S)] = {gemv_f32<S>, matmul_f32<S>};
  }
}

void register_float_kernels(MatmulTable& table) {
  set_kernels<WeightScheme::kF32>(table);
  set_kernels<WeightScheme::kF16>(table);
  set_kernels<WeightScheme::kBf16>(table);
  set_kernels<WeightScheme::kInt8Sym>(table);
  set_kernels<WeightScheme::kInt8Asym>(table);
  set_kernels<WeightScheme::kInt4Sym>(table);
  set_kernels<WeightScheme::kInt4Asym>(table);
  set_kernels<WeightScheme::kNf4>(table);
}

}  // namespace kiln::kernels::avx2
