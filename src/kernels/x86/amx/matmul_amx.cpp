// AMX prefill GEMM: int4 / int8 weights × int8 activations (TDPBSUD) and bf16 × bf16
// (TDPBF16PS), for 16-token tiles; decode GEMV, f32-activation families and the token remainder
// (n % 16) use the AVX-512 kernels. The packed avx512 layouts are already AMX "B" tiles: 16
// consecutive int8 k-chunks (16 rows × 4 codes, 64 bytes each) are one 64-column B tile, 16 bf16
// k-pairs one 32-column B tile; int4 is unpacked to u8 one k-step at a time.
// NOTE: written against the Intel SDM. kernels_test checks
// these kernels on an emulation of the tile instructions (tests/kernels/amx_emulation.cpp) and
// runs its amx cases on the real instructions only where the CPU has them.
#include <immintrin.h>

#include <cstring>

#include "kernels/matmul.hpp"
#include "kernels/x86/amx/amx_kernels.hpp"
#include "kernels/x86/avx512/avx512_kernels.hpp"
#include "kernels/x86/avx512/avx512_tile_io.hpp"

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
// [a_bytes / 4 rows × 64 bytes]. TILECFG is per thread, so every call configures its own.
void configure_tiles(std::uint16_t a_bytes) {
  TileConfig cfg;
  cfg.colsb[0] = 64;
  cfg.rows[0] = 16;
  cfg.colsb[1] = a_bytes;
  cfg.rows[1] = 16;
  cfg.colsb[2] = 64;
  cfg.rows[2] = static_cast<std::uint8_t>(a_bytes / 4);
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

// int4 k-step: 64-byte int4 chunks (16 rows × 8 codes) -> u8 B rows (16 rows × 4 codes).
void unpack_int4_step(const std::uint8_t* chunks, std::size_t k_step, std::uint8_t* b_rows) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  for (std::size_t c = 0; c < k_step / 8; ++c) {
    const __m512i v = _mm512_loadu_si512(chunks + c * 64);
    _mm512_storeu_si512(b_rows + c * 128, _mm512_and_si512(v, low));
    _mm512_storeu_si512(b_rows + c * 128 + 64, _mm512_and_si512(_mm512_srli_epi16(v, 4), low));
  }
}

template <bool kInt4, bool kAsym>
void gemm_int8_amx(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const std::size_t block = int8_block_columns(l, xq.group_size);
  const std::size_t k_step = block % 64 == 0 ? 64 : 32;
  const std::size_t in_rounded = (l.in + 31) / 32 * 32;
  const std::size_t tile_bytes = l.k_padded * (kInt4 ? 8 : 16);
  const std::size_t tokens = a.n / kTokens * kTokens;
  const __m512i offset = _mm512_set1_epi32(kInt4 ? 8 : 128);
  alignas(64) std::int32_t c_tile[kTokens * kTileRows];
  alignas(64) std::uint8_t b_unpacked[64 * 16];
  configure_tiles(static_cast<std::uint16_t>(k_step));
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end && tokens > 0; ++t) {
    const __mmask16 mask = avx512::row_mask(t, row_begin, row_end);
    const std::uint8_t* tile = w.data() + t * tile_bytes;
    const std::uint16_t* scales = w.scales() + t * l.groups * kTileRows;
    const std::uint8_t* zeros = w.zeros() + t * l.groups * kTileRows;
    for (std::size_t i0 = 0; i0 < tokens; i0 += kTokens) {
      __m512 acc[kTokens];
      for (auto& v : acc) v = _mm512_setzero_ps();
      for (std::size_t k0 = 0; k0 < l.in; k0 += block) {
        const std::size_t k1 = std::min(k0 + block, in_rounded);
        _tile_zero(0);
        for (std::size_t k = k0; k < k1; k += k_step) {
          _tile_loadd(1, xq.codes + i0 * xq.row_stride + k, static_cast<long>(xq.row_stride));
          if constexpr (kInt4) {
            unpack_int4_step(tile + k * 8, k_step, b_unpacked);
            _tile_loadd(2, b_unpacked, 64);
          } else {
            _tile_loadd(2, tile + k * 16, 64);
          }
          _tile_dpbsud(0, 1, 2);
        }
        _tile_stored(0, c_tile, 64);
        const std::size_t g = k0 / l.group_size;
        const __m512 weight_scale = avx512::load_scales(scales + g * kTileRows);
        const __m512i zp = kAsym ? avx512::load_zero_points(zeros + g * kTileRows) : offset;
        for (std::size_t j = 0; j < kTokens; ++j) {
          const std::size_t i = i0 + j;
          std::int32_t sum_q = 0;
          for (std::size_t c = k0 / kActivationChunk; c < k1 / kActivationChunk; ++c) {
            sum_q += xq.chunk_sums[i * xq.chunks + c];
          }
          const __m512i dot = _mm512_sub_epi32(_mm512_load_si512(c_tile + j * kTileRows),
                                               _mm512_mullo_epi32(zp, _mm512_set1_epi32(sum_q)));
          const __m512 scale =
              _mm512_mul_ps(weight_scale, _mm512_set1_ps(xq.scales[i * xq.groups + k0 / xq.group_size]));
          acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[j]);
        }
      }
      for (std::size_t j = 0; j < kTokens; ++j) {
        avx512::store_tile(a.y + (i0 + j) * a.y_stride, t, mask, acc[j], a.bias);
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
  gemm_int8_amx<kInt4, kAsym>(w, a, row_begin, row_end);
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
