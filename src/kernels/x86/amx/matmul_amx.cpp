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

// One weight tile's B rows for its whole packed width (k_padded: a multiple of 64, zero beyond
// `in`, so a last 64-wide K step stays inside them): int8 weights are already laid out so; int4
// weights are unpacked once per tile into `strip` and reused by every token block.
template <bool kInt4>
const std::uint8_t* b_rows(const std::uint8_t* tile, std::size_t k_padded, std::vector<std::uint8_t>& strip) {
  if constexpr (!kInt4) return tile;
  strip.resize(k_padded * 16);
  unpack_int4(tile, k_padded, strip.data());
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

// The geometry of one int8 GEMM call and what each token's activations contribute to it,
// computed once per call rather than once per weight tile. Blocks are the integer blocks
// (int8_block_columns: the smaller of the two group sizes), so either every block is one
// weight group, or every block is one activation group of a wider weight group. With u the
// stored codes (sym: q_w + 8 / + 128; asym: q_w + zp) and x ≈ s_a q:
//   y = Σ_groups s_w Σ_{b∈group} s_a,b (Σ u q - zp Σ q)
// and zero_terms[i][b] = -s_a,b Σ_b q (times the constant offset for sym weights).
template <bool kInt4, bool kAsym>
struct Int8Gemm {
  std::size_t in, block, k_step, in_rounded, k_padded, blocks, blocks_per_act_group, blocks_per_weight_group,
      tile_bytes, tokens;

  Int8Gemm(const PackedLayout& l, const QuantizedActivations& xq, std::size_t n)
      : in(l.in),
        block(int8_block_columns(l, xq.group_size)),
        k_step(block % 64 == 0 ? 64 : 32),
        in_rounded((l.in + 31) / 32 * 32),
        k_padded(l.k_padded),
        blocks((l.in + block - 1) / block),
        blocks_per_act_group(xq.group_size >= l.in ? blocks : xq.group_size / block),
        blocks_per_weight_group(l.group_size >= l.in ? blocks : l.group_size / block),
        tile_bytes(l.k_padded * (kInt4 ? 8 : 16)),
        tokens(n / kTokens * kTokens) {}

  // The activation scales of block b, token i at [i * xq.groups].
  const float* act_scales(const QuantizedActivations& xq, std::size_t b) const {
    return xq.scales + b / blocks_per_act_group;
  }

  // [tokens, blocks]
  void zero_terms(const QuantizedActivations& xq, std::vector<float>& out) const {
    const float offset = kAsym ? 1.0f : (kInt4 ? 8.0f : 128.0f);
    out.resize(tokens * blocks);
    for (std::size_t i = 0; i < tokens; ++i) {
      const std::int32_t* sums = xq.chunk_sums + i * xq.chunks;
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t k0 = b * block;
        const std::size_t k1 = std::min(k0 + block, in_rounded);
        out[i * blocks + b] =
            -offset * act_scales(xq, b)[i * xq.groups] * static_cast<float>(avx512::chunk_sum(sums, k0, k1));
      }
    }
  }

  // Weight tile t of rows [row_begin, row_end): its B rows (int4 unpacked into `strip`), scales
  // and zero points, and the prefetch of the next tile of the range, a few lines per block.
  struct Tile {
    __mmask16 mask;
    const std::uint8_t* b;
    const std::uint16_t* scales;
    const std::uint8_t* zeros;
    avx512::Prefetch prefetch;
  };
  Tile tile(const PackedWeights& w, std::size_t t, std::size_t row_begin, std::size_t row_end,
            std::vector<std::uint8_t>& strip) const {
    const std::uint8_t* next = w.data() + (t + 1) * tile_bytes;
    const std::size_t steps = blocks * (tokens / kTokens);
    const bool last = (t + 1) * kTileRows >= row_end;
    const std::size_t params = t * w.layout.groups * kTileRows;
    return {avx512::row_mask(t, row_begin, row_end), b_rows<kInt4>(w.data() + t * tile_bytes, k_padded, strip),
            w.scales() + params, w.zeros() + params,
            avx512::Prefetch{next, last ? next : next + tile_bytes, (tile_bytes / 64 + steps - 1) / steps}};
  }

  // Tokens i0 .. i0 + 15 start on tile set 0 with block 0.
  void start(const QuantizedActivations& xq, std::size_t i0, const Tile& tile) const {
    issue_block(0, xq, i0, tile.b, 0, std::min(block, in_rounded), k_step);
  }
  // Block blk's products (on tile set blk % 2) into c_tile, after the next block is issued on the
  // other set.
  void read(std::size_t blk, const QuantizedActivations& xq, std::size_t i0, Tile& tile, std::int32_t* c_tile) const {
    const std::size_t k_next = (blk + 1) * block;
    const int set = static_cast<int>(blk % 2);
    if (k_next < in) issue_block(set ^ 1, xq, i0, tile.b, k_next, std::min(k_next + block, in_rounded), k_step);
    tile.prefetch.step();
    store_products(set, c_tile);
  }
};

// Every block is one weight group (the activation group is as wide or wider: the default 128
// on g128 weights, or 128 on g32): each block's readout is two FMAs per token into totals that
// stay in registers (sym: y += s_w (s_a Σ u q + zero term); asym: y += (s_w s_a) Σ u q +
// (zp s_w) zero term), while the next block's products run on the other tile set.
template <bool kInt4, bool kAsym>
void gemm_int8_amx_per_block(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const Int8Gemm<kInt4, kAsym> g(l, xq, a.n);
  thread_local std::vector<float> zero_terms;
  g.zero_terms(xq, zero_terms);
  alignas(64) std::int32_t c_tile[kTokens * kTileRows];
  thread_local std::vector<std::uint8_t> strip;
  configure_tiles(static_cast<std::uint16_t>(g.k_step));
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end && g.tokens > 0; ++t) {
    typename Int8Gemm<kInt4, kAsym>::Tile tile = g.tile(w, t, row_begin, row_end, strip);
    for (std::size_t i0 = 0; i0 < g.tokens; i0 += kTokens) {
      __m512 total[kTokens];
      for (std::size_t j = 0; j < kTokens; ++j) total[j] = _mm512_setzero_ps();
      g.start(xq, i0, tile);
      for (std::size_t blk = 0; blk < g.blocks; ++blk) {
        g.read(blk, xq, i0, tile, c_tile);
        const __m512 weight_scale = avx512::load_scales(tile.scales + blk * kTileRows);
        const float* act_scales = g.act_scales(xq, blk);
        [[maybe_unused]] __m512 zero_scale;
        if constexpr (kAsym) {
          zero_scale =
              _mm512_mul_ps(_mm512_cvtepi32_ps(avx512::load_zero_points(tile.zeros + blk * kTileRows)), weight_scale);
        }
#pragma GCC unroll 16
        for (std::size_t j = 0; j < kTokens; ++j) {
          const std::size_t i = i0 + j;
          const __m512 products = _mm512_cvtepi32_ps(_mm512_load_si512(c_tile + j * kTileRows));
          const __m512 act_scale = _mm512_set1_ps(act_scales[i * xq.groups]);
          const __m512 zero_term = _mm512_set1_ps(zero_terms[i * g.blocks + blk]);
          if constexpr (kAsym) {
            total[j] = _mm512_fmadd_ps(products, _mm512_mul_ps(weight_scale, act_scale), total[j]);
            total[j] = _mm512_fmadd_ps(zero_scale, zero_term, total[j]);
          } else {
            total[j] = _mm512_fmadd_ps(_mm512_fmadd_ps(products, act_scale, zero_term), weight_scale, total[j]);
          }
        }
      }
      for (std::size_t j = 0; j < kTokens; ++j) {
        avx512::store_tile(a.y + (i0 + j) * a.y_stride, t, tile.mask, total[j], a.bias);
      }
    }
  }
  _tile_release();
}

// Weight groups span several blocks (per-channel weights, such as an int8 head, or weight groups
// wider than the activation groups): each block adds s_a Σ u q into registers, and the weight
// scale and the zero-point term are applied once per weight group.
template <bool kInt4, bool kAsym>
void gemm_int8_amx_per_group(const PackedWeights& w, const MatmulArgs& a, std::size_t row_begin, std::size_t row_end) {
  const PackedLayout& l = w.layout;
  const QuantizedActivations& xq = *a.xq;
  const Int8Gemm<kInt4, kAsym> g(l, xq, a.n);
  thread_local std::vector<float> zero_terms;
  g.zero_terms(xq, zero_terms);
  alignas(64) std::int32_t c_tile[kTokens * kTileRows];
  alignas(64) float total[kTokens * kTileRows];
  thread_local std::vector<std::uint8_t> strip;
  configure_tiles(static_cast<std::uint16_t>(g.k_step));
  for (std::size_t t = row_begin / kTileRows; t * kTileRows < row_end && g.tokens > 0; ++t) {
    typename Int8Gemm<kInt4, kAsym>::Tile tile = g.tile(w, t, row_begin, row_end, strip);
    for (std::size_t i0 = 0; i0 < g.tokens; i0 += kTokens) {
      __m512 acc[kTokens];
      float zero_sum[kTokens];
      for (std::size_t j = 0; j < kTokens; ++j) {
        acc[j] = _mm512_setzero_ps();
        zero_sum[j] = 0.0f;
        _mm512_store_ps(total + j * kTileRows, _mm512_setzero_ps());
      }
      g.start(xq, i0, tile);
      std::size_t weight_group = 0, weight_left = g.blocks_per_weight_group;
      for (std::size_t blk = 0; blk < g.blocks; ++blk) {
        g.read(blk, xq, i0, tile, c_tile);
        const float* act_scales = g.act_scales(xq, blk);
#pragma GCC unroll 16
        for (std::size_t j = 0; j < kTokens; ++j) {
          const std::size_t i = i0 + j;
          acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c_tile + j * kTileRows)),
                                   _mm512_set1_ps(act_scales[i * xq.groups]), acc[j]);
          zero_sum[j] += zero_terms[i * g.blocks + blk];
        }
        if (--weight_left != 0 && blk + 1 < g.blocks) continue;
        const __m512 weight_scale = avx512::load_scales(tile.scales + weight_group * kTileRows);
        const __m512 zero_point =
            kAsym ? _mm512_cvtepi32_ps(avx512::load_zero_points(tile.zeros + weight_group * kTileRows))
                  : _mm512_set1_ps(1);
#pragma GCC unroll 16
        for (std::size_t j = 0; j < kTokens; ++j) {
          const __m512 exact = _mm512_fmadd_ps(zero_point, _mm512_set1_ps(zero_sum[j]), acc[j]);
          _mm512_store_ps(total + j * kTileRows,
                          _mm512_fmadd_ps(exact, weight_scale, _mm512_load_ps(total + j * kTileRows)));
          acc[j] = _mm512_setzero_ps();
          zero_sum[j] = 0.0f;
        }
        ++weight_group;
        weight_left = g.blocks_per_weight_group;
      }
      for (std::size_t j = 0; j < kTokens; ++j) {
        avx512::store_tile(a.y + (i0 + j) * a.y_stride, t, tile.mask, _mm512_load_ps(total + j * kTileRows), a.bias);
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
  const std::size_t block = int8_block_columns(w.layout, a.xq->group_size);
  if (w.layout.group_size < w.layout.in && w.layout.group_size == block) {
    gemm_int8_amx_per_block<kInt4, kAsym>(w, a, row_begin, row_end);
  } else {
    gemm_int8_amx_per_group<kInt4, kAsym>(w, a, row_begin, row_end);
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
