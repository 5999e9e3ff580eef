// The AMX kernels (src/kernels/x86/amx/matmul_amx.cpp) compiled against a scalar emulation of
// the tile instructions they use, written from the Intel SDM: TILECFG rows / column bytes,
// TILELOADD / TILESTORED row by row with a stride, TDPBSUD (signed A bytes × unsigned B bytes
// into int32 C) and TDPBF16PS (bf16 pairs into f32 C). This checks the kernels' layouts,
// strides, blocking and token tails on a CPU without AMX. Built with the avx512 flags (the
// kernels use AVX-512 around the tiles) and only called after the test checked for AVX-512.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace kiln::kernels::amx_emulation {
namespace {

struct TileState {
  std::uint8_t rows[8] = {};
  std::uint16_t colsb[8] = {};
  alignas(64) std::uint8_t data[8][16][64] = {};
};
thread_local TileState t_tiles;

void check_tile(int t) {
  if (t < 0 || t > 7 || t_tiles.rows[t] == 0 || t_tiles.colsb[t] == 0) {
    throw std::logic_error("AMX emulation: tile used without a configuration");
  }
}

void load_config(const void* config) {
  const auto* bytes = static_cast<const std::uint8_t*>(config);
  if (bytes[0] != 1) throw std::logic_error("AMX emulation: palette must be 1");
  t_tiles = TileState{};
  for (int t = 0; t < 8; ++t) {
    std::memcpy(&t_tiles.colsb[t], bytes + 16 + 2 * t, 2);
    t_tiles.rows[t] = bytes[48 + t];
    if (t_tiles.rows[t] > 16 || t_tiles.colsb[t] > 64) throw std::logic_error("AMX emulation: tile too large");
  }
}

void load(int t, const void* base, long stride) {
  check_tile(t);
  std::memset(t_tiles.data[t], 0, sizeof(t_tiles.data[t]));
  for (int r = 0; r < t_tiles.rows[t]; ++r) {
    std::memcpy(t_tiles.data[t][r], static_cast<const std::uint8_t*>(base) + r * stride, t_tiles.colsb[t]);
  }
}

void store(int t, void* base, long stride) {
  check_tile(t);
  for (int r = 0; r < t_tiles.rows[t]; ++r) {
    std::memcpy(static_cast<std::uint8_t*>(base) + r * stride, t_tiles.data[t][r], t_tiles.colsb[t]);
  }
}

void zero(int t) {
  check_tile(t);
  std::memset(t_tiles.data[t], 0, sizeof(t_tiles.data[t]));
}

// C[m][n] (4-byte elements) += Σ_k Σ_i A[m][4k + i] · B[k][4n + i] (dword of products / pairs).
void check_shapes(int c, int a, int b) {
  check_tile(c), check_tile(a), check_tile(b);
  const int m = t_tiles.rows[a], k = t_tiles.colsb[a] / 4, n = t_tiles.colsb[c] / 4;
  if (t_tiles.rows[c] != m || t_tiles.rows[b] != k || t_tiles.colsb[b] != n * 4) {
    throw std::logic_error("AMX emulation: tile shapes do not chain (C = A · B)");
  }
}

void dpbsud(int c, int a, int b) {
  check_shapes(c, a, b);
  const int rows = t_tiles.rows[a], k4 = t_tiles.colsb[a] / 4, cols = t_tiles.colsb[c] / 4;
  for (int m = 0; m < rows; ++m) {
    for (int n = 0; n < cols; ++n) {
      std::int32_t acc;
      std::memcpy(&acc, &t_tiles.data[c][m][4 * n], 4);
      for (int k = 0; k < k4; ++k) {
        for (int i = 0; i < 4; ++i) {
          acc += static_cast<std::int8_t>(t_tiles.data[a][m][4 * k + i]) * t_tiles.data[b][k][4 * n + i];
        }
      }
      std::memcpy(&t_tiles.data[c][m][4 * n], &acc, 4);
    }
  }
}

float bf16(const std::uint8_t* p) {
  std::uint32_t bits = std::uint32_t{p[0]} << 16 | std::uint32_t{p[1]} << 24;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void dpbf16ps(int c, int a, int b) {
  check_shapes(c, a, b);
  const int rows = t_tiles.rows[a], k2 = t_tiles.colsb[a] / 4, cols = t_tiles.colsb[c] / 4;
  for (int m = 0; m < rows; ++m) {
    for (int n = 0; n < cols; ++n) {
      float acc;
      std::memcpy(&acc, &t_tiles.data[c][m][4 * n], 4);
      for (int k = 0; k < k2; ++k) {
        acc += bf16(&t_tiles.data[a][m][4 * k]) * bf16(&t_tiles.data[b][k][4 * n]);
        acc += bf16(&t_tiles.data[a][m][4 * k + 2]) * bf16(&t_tiles.data[b][k][4 * n + 2]);
      }
      std::memcpy(&t_tiles.data[c][m][4 * n], &acc, 4);
    }
  }
}

void release() { t_tiles = TileState{}; }

}  // namespace
}  // namespace kiln::kernels::amx_emulation

#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbsud
#undef _tile_dpbf16ps
#define _tile_loadconfig(config) ::kiln::kernels::amx_emulation::load_config(config)
#define _tile_release() ::kiln::kernels::amx_emulation::release()
#define _tile_loadd(t, base, stride) ::kiln::kernels::amx_emulation::load(t, base, stride)
#define _tile_stored(t, base, stride) ::kiln::kernels::amx_emulation::store(t, base, stride)
#define _tile_zero(t) ::kiln::kernels::amx_emulation::zero(t)
#define _tile_dpbsud(c, a, b) ::kiln::kernels::amx_emulation::dpbsud(c, a, b)
#define _tile_dpbf16ps(c, a, b) ::kiln::kernels::amx_emulation::dpbf16ps(c, a, b)
// The kernels land in namespace amx_emulated (amx::matmul_table becomes amx_emulated::matmul_table).
#define amx amx_emulated
#include "kernels/x86/amx/matmul_amx.cpp"
