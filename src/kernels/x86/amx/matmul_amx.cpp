// AMX prefill GEMM: int4 / int8 weights × int8 activations (TDPBSUD) and bf16 × bf16
// (TDPBF16PS), for 16-token tiles; decode GEMV, f32-activation families and the token remainder
// (n % 16) use the AVX-512 kernels. The packed avx512 layouts are already AMX "B" tiles: 16
// consecutive int8 k-chunks (16 rows × 4 codes, 64 bytes each) are one 64-column B tile, 16 bf16
// k-pairs one 32-column B tile; int4 is unpacked to u8 once per tile, for every token block.
// NOTE: written against the Intel SDM. kernels_test checks
// these kernels on an emulation of the tile instructions (tests/kernels/amx_emulation.cpp) and
// runs its amx cases on the real instructions only where the CPU has them.
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "kernels/matmul.hpp"
#include "kernels/x86/amx/amx_kernels.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "kernels/x86/avx512/avx512_tile_io.hpp"
#include "kernels/x86/avx512/int8_blocks_avx512.hpp"

namespace kiln::kernels {
namespace {

using avx512::kTileRows;

constexpr std::size_t kTokens = 16;  // tokens per A tile

struct alignas(64) TileConfig {
  std::uint8_t palette_id = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

// tmm0 = C [16 tokens × 16 rows, 4-byte], tmm1 = A [16 tokens × a_bytes], tmm2 = B
// [a_bytes / 4 rows × 64 bytes]; tmm3-5 the same again (a second set, so one block's products
// run while the previous block's are read out). TILECFG is per thread, so every call configures
// its own.
void configure_tiles(std::uint16_t a_bytes) {
  TileConfig cfg;
  for (int set = 0; set < 2; ++set) {
    cfg.colsb[3 * set] = 64;
    cfg.rows[3 * set] = 16;
    cfg.colsb[3 * set + 1] = a_bytes;
    cfg.rows[3 * set + 1] = 16;
    cfg.colsb[3 * set + 2] = 64;
    cfg.rows[3 * set + 2] = static_cast<std::uint8_t>(a_bytes / 4);
  }
  // NOTE: GCC 12's _tile_loadconfig tells the compiler it reads 8 bytes of the config, so at -O2
  // the stores above were dropped as dead and every tile kept 0 rows (tilezero then raised #UD on
  // real AMX hardware). This empty asm reads the whole struct, which keeps them.
  __asm__ volatile("" : : "m"(cfg));
  _tile_loadconfig(&cfg);
}

// The tokens beyond the last full 16-token tile go to the AVX-512 kernel.
QuantizedActivations token_rows(const QuantizedActivations& q, std::size_t begin, std::size_t n) {
  QuantizedActivations r = q;
  r.n = n;
  r.codes += begin * q.row_stride;
  r.scales += begin * q.groups;
  r.chunk_sums += begin * q.chunks;
  return r;
}

void run_tail(MatmulFn avx512_fn, const PackedWeights& w, const MatmulArgs& a, std::size_t tokens,
              std::size_t row_begin, std::size_t row_end) {
  if (tokens == a.n) return;
  MatmulArgs tail = a;
  tail.n = a.n - tokens;
  tail.y = a.y + tokens * a.y_stride;
  QuantizedActivations tail_q;
  if (a.xq) {
    tail_q = token_rows(*a.xq, tokens, tail.n);
    tail.xq = &tail_q;
  }
  if (a.x) tail.x = a.x + tokens * w.layout.in;
  avx512_fn(w, tail, row_begin, row_end);
}

// int4 columns [0, k_end): 64-byte int4 chunks (16 rows × 8 codes) -> u8 B rows (16 rows × 4
// codes), column k's B row at k * 16, the int8 layout.
void unpack_int4(const std::uint8_t* chunks, std::size_t k_end, std::uint8_t* b_rows) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  for (std::size_t c = 0; c < k_end / 8; ++c) {
    const __m512i v = _mm512_loadu_si512(chunks + c * 64);
    _mm512_storeu_si512(b_rows + c * 128, _mm512_and_si512(v, low));
    _mm512_storeu_si512(b_rows + c * 128 + 64, _mm512_and_si512(_mm512_srli_epi16(v, 4), low));
  }
}

// One weight tile's B rows for the whole input width: int8 weights are already laid out so;
// int4 weights are unpacked once per tile into `strip` and reused by every token block.
template <bool kInt4>
const std::uint8_t* b_rows(const std::uint8_t* tile, std::size_t in_rounded, std::vector<std::uint8_t>& strip) {
  if constexpr (!kInt4) return tile;
  strip.resize(in_rounded * 16);
  unpack_int4(tile, in_rounded, strip.data());
  return strip.data();
}

// One integer block's products, columns [k0, k1) of tokens i0 .. i0 + 15, into tile set `set`
// (C zeroed first). Tile numbers are immediates: one branch per set.
inline void issue_block(int set, const QuantizedActivations& xq, std::size_t i0, const std::uint8_t* b, std::size_t k0,
                        std::size_t k1, std::size_t k_step) {
  const std::int8_t* a_rows = xq.codes + i0 * xq.row_stride;
  const auto stride = static_cast<long>(xq.row_stride);
  if (set == 0) {
    _tile_zero(0);
    for (std::size_t k = k0; k < k1; k += k_step) {
      _tile_loadd(1, a_rows + k, stride);
      _tile_loadd(2, b + k * 16, 64);
      _tile_dpbsud(0, 1, 2);
    }
  } else {
    _tile_zero(3);
    for (std::size_t k = k0; k < k1; k += k_step) {
      _tile_loadd(4, a_rows + k, stride);
      _tile_loadd(5, b + k * 16, 64);
      _tile_dpbsud(3, 4, 5);
    }
  }
}

inline void store_products(int set, std::int32_t* c_tile) {
  if (set == 0) {
    _tile_stored(0, c_tile, 64);
  } else {
    _tile_stored(3, c_tile, 64);
  }
}

// Per token block: TDPBSUD over each integer block into C, then (as the AVX-512 GEMM does) one
// int32 -> f32 conversion and one FMA by the activation scale per row, with the zero-point
// correction and the weight scale applied once per weight group:
//   Σ_b s_a,b Σ_{k∈b} (u - zp) q = Σ_b s_a,b Σ_{k∈b} u q  -  zp · Σ_b s_a,b Σ_{k∈b} q.
template <bool kInt4, bool kAsym>
void gemm_int8_amx(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const std::size_t block = int8_block_columns(l, xq.group_size);
  const std::size_t k_step = block % 64 == 0 ? 64 : 32;
  const std::size_t in_rounded = (l.in + 31) / 32 * 32;
  const std::size_t whole_row = (l.in + block - 1) / block;
  const std::size_t blocks_per_act_group = xq.group_size >= l.in ? whole_row : xq.group_size / block;
  const std::size_t blocks_per_weight_group = l.group_size >= l.in ? whole_row : l.group_size / block;
  const std::size_t tile_bytes = l.k_padded * (kInt4 ? 8 : 16);
  const std::size_t tokens = a.n / kTokens * kTokens;
  const bool one_chunk = block == kActivationChunk;
  alignas(64) std::int32_t c_tile[kTokens * kTileRows];
  alignas(64) float total[kTokens * kTileRows];
  thread_local std::vector<std::uint8_t> strip;
  configure_tiles(static_cast<std::uint16_t>(k_step));
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end && tokens > 0; ++t) {
    const __mmask16 mask = avx512::row_mask(t, row_begin, row_end);
    const std::uint8_t* b = b_rows<kInt4>(w.data() + t * tile_bytes, in_rounded, strip);
    const std::uint16_t* scales = w.scales() + t * l.groups * kTileRows;
    const std::uint8_t* zeros = w.zeros() + t * l.groups * kTileRows;
    for (std::size_t i0 = 0; i0 < tokens; i0 += kTokens) {
      __m512 group_acc[kTokens];
      float zero_sum[kTokens];
      for (std::size_t j = 0; j < kTokens; ++j) {
        group_acc[j] = _mm512_setzero_ps();
        zero_sum[j] = 0.0f;
        _mm512_store_ps(total + j * kTileRows, _mm512_setzero_ps());
      }
      std::size_t act_group = 0, act_left = blocks_per_act_group;
      std::size_t weight_group = 0, weight_left = blocks_per_weight_group;
      const auto issue = [&](std::size_t k0, int set) {
        issue_block(set, xq, i0, b, k0, std::min(k0 + block, in_rounded), k_step);
      };
      issue(0, 0);
      int set = 0;
      for (std::size_t k0 = 0; k0 < l.in; k0 += block, set ^= 1) {
        const std::size_t k1 = std::min(k0 + block, in_rounded);
        if (k0 + block < l.in) issue(k0 + block, set ^ 1);  // runs while this block is read out
        store_products(set, c_tile);
#pragma GCC unroll 16
        for (std::size_t j = 0; j < kTokens; ++j) {
          const std::size_t i = i0 + j;
          const float act_scale = xq.scales[i * xq.groups + act_group];
          const std::int32_t* sums = xq.chunk_sums + i * xq.chunks;
          const std::int32_t sum_q = one_chunk ? sums[k0 / kActivationChunk] : avx512::chunk_sum(sums, k0, k1);
          zero_sum[j] += act_scale * static_cast<float>(sum_q);
          group_acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c_tile + j * kTileRows)),
                                         _mm512_set1_ps(act_scale), group_acc[j]);
        }
        if (--act_left == 0) {
          ++act_group;
          act_left = blocks_per_act_group;
        }
        // Blocks divide the weight group (check_activation_groups), so a group ends on a block end.
        if (--weight_left != 0 && k0 + block < l.in) continue;
        const __m512 weight_scale = avx512::load_scales(scales + weight_group * kTileRows);
        const __m512 zero_point = kAsym ? _mm512_cvtepi32_ps(avx512::load_zero_points(zeros + weight_group * kTileRows))
                                        : _mm512_set1_ps(kInt4 ? 8.0f : 128.0f);  // sym codes are stored + 8 / + 128
#pragma GCC unroll 16
        for (std::size_t j = 0; j < kTokens; ++j) {
          const __m512 exact = _mm512_fnmadd_ps(zero_point, _mm512_set1_ps(zero_sum[j]), group_acc[j]);
          _mm512_store_ps(total + j * kTileRows,
                          _mm512_fmadd_ps(exact, weight_scale, _mm512_load_ps(total + j * kTileRows)));
          group_acc[j] = _mm512_setzero_ps();
          zero_sum[j] = 0.0f;
        }
        ++weight_group;
        weight_left = blocks_per_weight_group;
      }
      for (std::size_t j = 0; j < kTokens; ++j) {
        avx512::store_tile(a.y + (i0 + j) * a.y_stride, t, mask, _mm512_load_ps(total + j * kTileRows), a.bias);
      }
    }
  }
  _tile_release();
}

// The common case where the activation groups are the weight groups (DYNAMIC_QUANTIZATION_GROUP_SIZE
// equal to the weights' group size): each block is one group of both, so its readout folds
// both scales and the zero-point term into two FMAs per token, the totals stay in registers,
// and each token's s_a Σ q per group is computed once per call instead of once per weight tile:
//   y += s_w (s_a Σ u q - zp s_a Σ q)       symmetric (zp the constant code offset)
//   y += (s_w s_a) Σ u q - (zp s_w) s_a Σ q   asymmetric (zp per output row)
template <bool kInt4, bool kAsym>
void gemm_int8_amx_matched(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const std::size_t block = l.group_size;
  const std::size_t k_step = block % 64 == 0 ? 64 : 32;
  const std::size_t in_rounded = (l.in + 31) / 32 * 32;
  const std::size_t groups = l.groups;
  const std::size_t tile_bytes = l.k_padded * (kInt4 ? 8 : 16);
  const std::size_t tokens = a.n / kTokens * kTokens;
  // Sym codes are stored + 8 / + 128.
  const float code_offset = kAsym ? 1.0f : (kInt4 ? 8.0f : 128.0f);
  thread_local std::vector<float> zero_terms;  // [tokens, groups] -s_a Σ q (sym: times the offset)
  zero_terms.resize(tokens * groups);
  for (std::size_t i = 0; i < tokens; ++i) {
    const std::int32_t* sums = xq.chunk_sums + i * xq.chunks;
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t k0 = g * block;
      const std::size_t k1 = std::min(k0 + block, in_rounded);
      zero_terms[i * groups + g] =
          -code_offset * xq.scales[i * xq.groups + g] * static_cast<float>(avx512::chunk_sum(sums, k0, k1));
    }
  }
  alignas(64) std::int32_t c_tile[kTokens * kTileRows];
  thread_local std::vector<std::uint8_t> strip;
  configure_tiles(static_cast<std::uint16_t>(k_step));
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end && tokens > 0; ++t) {
    const __mmask16 mask = avx512::row_mask(t, row_begin, row_end);
    const std::uint8_t* b = b_rows<kInt4>(w.data() + t * tile_bytes, in_rounded, strip);
    const std::uint16_t* scales = w.scales() + t * groups * kTileRows;
    [[maybe_unused]] const std::uint8_t* zeros = w.zeros() + t * groups * kTileRows;
    for (std::size_t i0 = 0; i0 < tokens; i0 += kTokens) {
      __m512 total[kTokens];
      for (std::size_t j = 0; j < kTokens; ++j) total[j] = _mm512_setzero_ps();
      issue_block(0, xq, i0, b, 0, std::min(block, in_rounded), k_step);
      int set = 0;
      for (std::size_t g = 0; g < groups; ++g, set ^= 1) {
        const std::size_t k_next = (g + 1) * block;
        if (k_next < l.in) issue_block(set ^ 1, xq, i0, b, k_next, std::min(k_next + block, in_rounded), k_step);
        store_products(set, c_tile);
        const __m512 weight_scale = avx512::load_scales(scales + g * kTileRows);
        [[maybe_unused]] __m512 zero_scale;
        if constexpr (kAsym) {
          zero_scale = _mm512_mul_ps(_mm512_cvtepi32_ps(avx512::load_zero_points(zeros + g * kTileRows)), weight_scale);
        }
#pragma GCC unroll 16
        for (std::size_t j = 0; j < kTokens; ++j) {
          const std::size_t i = i0 + j;
          const __m512 products = _mm512_cvtepi32_ps(_mm512_load_si512(c_tile + j * kTileRows));
          const __m512 act_scale = _mm512_set1_ps(xq.scales[i * xq.groups + g]);
          const __m512 zero_term = _mm512_set1_ps(zero_terms[i * groups + g]);
          if constexpr (kAsym) {
            total[j] = _mm512_fmadd_ps(products, _mm512_mul_ps(weight_scale, act_scale), total[j]);
            total[j] = _mm512_fmadd_ps(zero_scale, zero_term, total[j]);
          } else {
            total[j] = _mm512_fmadd_ps(_mm512_fmadd_ps(products, act_scale, zero_term), weight_scale, total[j]);
          }
        }
      }
      for (std::size_t j = 0; j < kTokens; ++j) {
        avx512::store_tile(a.y + (i0 + j) * a.y_stride, t, mask, total[j], a.bias);
      }
    }
  }
  _tile_release();
}

// bf16: activations of 16 tokens × 32 columns are rounded into an A tile buffer; B is the
// packed [K/2][16][2] layout as is; C accumulates in f32 across all of K.
void gemm_bf16_amx(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const PackedLayout& l = w.layout;
  const std::size_t tokens = a.n / kTokens * kTokens;
  alignas(64) float c_tile[kTokens * kTileRows];
  alignas(64) std::uint16_t a_tile[kTokens * 32];
  configure_tiles(64);  // A: 32 bf16 per row; B: 16 rows of 16 pairs
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end && tokens > 0; ++t) {
    const __mmask16 mask = avx512::row_mask(t, row_begin, row_end);
    const std::uint8_t* tile = w.data() + t * l.k_padded * 32;
    for (std::size_t i0 = 0; i0 < tokens; i0 += kTokens) {
      _tile_zero(0);
      for (std::size_t k = 0; k < l.in; k += 32) {
        const __mmask16 lo = k >= l.in ? 0 : (l.in - k >= 16 ? 0xFFFF : (1u << (l.in - k)) - 1);
        const __mmask16 hi = k + 16 >= l.in ? 0 : (l.in - k - 16 >= 16 ? 0xFFFF : (1u << (l.in - k - 16)) - 1);
        for (std::size_t j = 0; j < kTokens; ++j) {
          const float* x = a.x + (i0 + j) * l.in + k;
          const __m512bh packed = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x + 16), _mm512_maskz_loadu_ps(lo, x));
          _mm512_store_si512(a_tile + j * 32, (__m512i)packed);
        }
        _tile_loadd(1, a_tile, 64);
        _tile_loadd(2, tile + k * 32, 64);
        _tile_dpbf16ps(0, 1, 2);
      }
      _tile_stored(0, c_tile, 64);
      for (std::size_t j = 0; j < kTokens; ++j) {
        avx512::store_tile(a.y + (i0 + j) * a.y_stride, t, mask, _mm512_load_ps(c_tile + j * kTileRows), a.bias);
      }
    }
  }
  _tile_release();
}

MatmulTable g_avx512_kernels;  // filled before the AMX table, used for the remainders

template <WeightScheme S, bool kInt4, bool kAsym>
void gemm_int8_entry(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const std::size_t group = w.layout.group_size;
  if (group < w.layout.in && group == a.xq->group_size && int8_block_columns(w.layout, group) == group) {
    gemm_int8_amx_matched<kInt4, kAsym>(w, a, row_begin, row_end);
  } else {
    gemm_int8_amx<kInt4, kAsym>(w, a, row_begin, row_end);
  }
  run_tail(g_avx512_kernels.int8[scheme_index(S)].gemm, w, a, a.n / kTokens * kTokens, row_begin, row_end);
}

void gemm_bf16_entry(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  gemm_bf16_amx(w, a, row_begin, row_end);
  run_tail(g_avx512_kernels.f32[scheme_index(WeightScheme::kBf16)].gemm, w, a, a.n / kTokens * kTokens, row_begin,
           row_end);
}

}  // namespace

const MatmulTable& amx::matmul_table() {
  static const MatmulTable table = [] {
    g_avx512_kernels = avx512::matmul_table();
    MatmulTable t = g_avx512_kernels;
    t.int8[scheme_index(WeightScheme::kInt4Sym)].gemm = gemm_int8_entry<WeightScheme::kInt4Sym, true, false>;
    t.int8[scheme_index(WeightScheme::kInt4Asym)].gemm = gemm_int8_entry<WeightScheme::kInt4Asym, true, true>;
    t.int8[scheme_index(WeightScheme::kInt8Sym)].gemm = gemm_int8_entry<WeightScheme::kInt8Sym, false, false>;
    t.int8[scheme_index(WeightScheme::kInt8Asym)].gemm = gemm_int8_entry<WeightScheme::kInt8Asym, false, true>;
    t.f32[scheme_index(WeightScheme::kBf16)].gemm = gemm_bf16_entry;
    return t;
  }();
  return table;
}

}  // namespace kiln::kernels
