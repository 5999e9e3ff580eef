// Device layouts of weight matrices: what the canonical model.bin layout is repacked into when a
// model is compiled for an ISA. One contiguous, 64-byte-aligned blob per matrix, so the compile
// cache can write it and map it back. Invariant: a layout is a pure function of
// (isa, scheme, out, in, group_size) and kPackedLayoutVersion.
//
// kScalar keeps the canonical layout (sections data | scales | zero points), read by the scalar
// reference kernels. The x86 layouts interleave R output rows into a tile (R = 16 on avx512/amx,
// 8 on avx2) so one vector load feeds R rows, with K zero-padded to a multiple of 64:
//   int4 / nf4   [tiles][K/8][R][4] bytes: byte (r, j) of k-chunk c holds row r's code at
//                k = 8c + j in its low nibble and k = 8c + 4 + j in its high nibble, as u4
//                (int4_sym stores code + 8; int4_asym and nf4 store the code).
//   int8         [tiles][K/4][R][4] bytes: row r's codes k = 4c .. 4c + 3; the VNNI "B" layout and,
//                with 16 consecutive chunks, one AMX B tile. avx512/amx store u8 (int8_sym:
//                code + 128); avx2 stores s8 (int8_asym: code - 128) for its sign trick.
//   scales       f16 [tiles][groups][R]       zero points u8 [tiles][groups][R] (asym only)
//   f32 / f16    [tiles][K][R] values         bf16 [tiles][K/2][R][2] values (pairs along k)
// Padded rows and columns hold code 0 / value 0 and scale 0, so they contribute nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "ir/weight_format.hpp"
#include "kernels/cpu_isa.hpp"

namespace kiln::kernels {

// Bump when any layout below changes: it keys the compile cache.
inline constexpr std::uint32_t kPackedLayoutVersion = 1;

// K is padded to this many columns in every x86 layout (one AMX int8 tile row).
inline constexpr std::size_t kPackedKAlign = 64;

struct PackedLayout {
  Isa isa = Isa::kScalar;
  WeightScheme scheme = WeightScheme::kF32;
  std::size_t out = 0, in = 0, group_size = 0;
  std::size_t tile_rows = 1;  // R
  std::size_t tiles = 0;      // ceil(out / R)
  std::size_t k_padded = 0;   // in rounded up to kPackedKAlign (== in for kScalar)
  std::size_t groups = 0;     // ceil(in / group_size); 1 for float schemes
  // Byte offsets and sizes of the sections in the blob, each 64-byte aligned.
  std::size_t data_offset = 0, data_bytes = 0;
  std::size_t scales_offset = 0, scales_bytes = 0;
  std::size_t zeros_offset = 0, zeros_bytes = 0;
  std::size_t total_bytes = 0;
};

// The layout `pack_weights` produces for this ISA. Throws kiln::Error for a combination the
// ISA has no kernel for.
PackedLayout packed_layout(Isa isa, WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size);

// A packed matrix: its layout and a pointer to its blob (owned elsewhere: a PackedMatrix or a
// mapped cache file, 64-byte aligned).
struct PackedWeights {
  PackedLayout layout;
  const std::uint8_t* blob = nullptr;

  const std::uint8_t* data() const { return blob + layout.data_offset; }
  const std::uint16_t* scales() const { return reinterpret_cast<const std::uint16_t*>(blob + layout.scales_offset); }
  const std::uint8_t* zeros() const { return blob + layout.zeros_offset; }
  // The canonical view, for the kScalar layout only.
  WeightView canonical_view() const;
};

// Owns a packed blob.
class PackedMatrix {
 public:
  explicit PackedMatrix(const PackedLayout& layout);
  PackedWeights view() const { return PackedWeights{layout_, blob_.get()}; }
  std::uint8_t* mutable_blob() { return blob_.get(); }
  const PackedLayout& layout() const { return layout_; }

 private:
  struct FreeDeleter {
    void operator()(std::uint8_t* p) const;
  };
  PackedLayout layout_;
  std::unique_ptr<std::uint8_t, FreeDeleter> blob_;
};

// Repacks a canonical matrix into the layout of `isa` (validating it first; `name` is the
// tensor named in errors). Runs once per matrix at compile time, so it is plain scalar code;
// matrices are independent, so a caller may pack several in parallel.
PackedMatrix pack_weights(const WeightView& canonical, Isa isa, std::string_view name);

// The same into caller memory of layout.total_bytes, 64-byte aligned (e.g. a mapped compile-cache
// file, so the packed copy never sits on the heap); `layout` = packed_layout(...) for this matrix.
void pack_weights_into(const WeightView& canonical, const PackedLayout& layout, std::span<std::uint8_t> blob,
                       std::string_view name);

}  // namespace kiln::kernels
