// Layout arithmetic and the scalar repack from canonical to each ISA's layout (see the header).
#include "kernels/packed_weights.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/error.hpp"
#include "util/half.hpp"

namespace kiln::kernels {
namespace {

std::size_t round_up(std::size_t value, std::size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// Bytes one stored weight takes in the x86 layouts (4-bit codes count as half).
std::size_t tile_data_bytes(WeightScheme scheme, std::size_t rows, std::size_t k) {
  switch (scheme) {
    case WeightScheme::kF32: return rows * k * 4;
    case WeightScheme::kF16:
    case WeightScheme::kBf16: return rows * k * 2;
    case WeightScheme::kInt8Sym:
    case WeightScheme::kInt8Asym: return rows * k;
    default: return rows * k / 2;
  }
}

// The byte a code is stored as in an x86 layout (see the header's table).
std::uint8_t stored_code(Isa isa, WeightScheme scheme, int code) {
  switch (scheme) {
    case WeightScheme::kInt4Sym: return static_cast<std::uint8_t>(code + 8);
    case WeightScheme::kInt8Sym: return static_cast<std::uint8_t>(isa == Isa::kAvx2 ? code : code + 128);
    case WeightScheme::kInt8Asym: return static_cast<std::uint8_t>(isa == Isa::kAvx2 ? code - 128 : code);
    default: return static_cast<std::uint8_t>(code);
  }
}

// The bytes one row stores, in column order: 4-bit codes one per byte (u4), 8-bit as stored.
void stored_row(const WeightView& w, Isa isa, std::size_t row, std::uint8_t* out) {
  const std::size_t base = row * w.in;
  if (is_4bit_scheme(w.scheme)) {
    const unsigned offset = w.scheme == WeightScheme::kInt4Sym ? 8u : 0u;  // i4 -> u4: code + 8
    for (std::size_t k = 0; k < w.in; ++k)
      out[k] = static_cast<std::uint8_t>((read_nibble(w.data, base + k) + offset) & 0xFu);
    return;
  }
  for (std::size_t k = 0; k < w.in; ++k) {
    const int code = w.scheme == WeightScheme::kInt8Sym ? static_cast<std::int8_t>(w.data[base + k]) : w.data[base + k];
    out[k] = stored_code(isa, w.scheme, code);
  }
}

// One tile at a time: its R rows are decoded into a [R, k_padded] byte buffer (zero beyond the
// matrix), then the tile is written sequentially in the layout's order.
void pack_codes(const WeightView& w, const PackedLayout& l, std::uint8_t* data) {
  const std::size_t R = l.tile_rows, K = l.k_padded;
  std::vector<std::uint8_t> rows(R * K);  // [R, K] stored bytes of the tile's rows
  std::uint8_t* out = data;
  for (std::size_t t = 0; t < l.tiles; ++t) {
    std::fill(rows.begin(), rows.end(), 0);
    for (std::size_t r = 0; r < R && t * R + r < w.out; ++r) stored_row(w, l.isa, t * R + r, &rows[r * K]);
    if (is_4bit_scheme(w.scheme)) {
      for (std::size_t k = 0; k < K; k += 8) {
        for (std::size_t r = 0; r < R; ++r) {
          const std::uint8_t* v = &rows[r * K + k];
          for (std::size_t j = 0; j < 4; ++j) *out++ = static_cast<std::uint8_t>(v[j] | (v[j + 4] << 4));
        }
      }
    } else {
      for (std::size_t k = 0; k < K; k += 4) {
        for (std::size_t r = 0; r < R; ++r) {
          std::memcpy(out, &rows[r * K + k], 4);
          out += 4;
        }
      }
    }
  }
}

template <typename T>
void pack_values_as(const WeightView& w, const PackedLayout& l, T* data) {
  const std::size_t R = l.tile_rows;
  const T* src = reinterpret_cast<const T*>(w.data);
  for (std::size_t row = 0; row < w.out; ++row) {
    const std::size_t t = row / R, r = row % R;
    const T* values = src + row * w.in;
    if (w.scheme == WeightScheme::kBf16) {  // [K/2][R][2]
      T* tile = data + t * l.k_padded * R + r * 2;
      for (std::size_t k = 0; k < w.in; ++k) tile[(k / 2) * R * 2 + k % 2] = values[k];
    } else {  // [K][R]
      T* tile = data + t * l.k_padded * R + r;
      for (std::size_t k = 0; k < w.in; ++k) tile[k * R] = values[k];
    }
  }
}

void pack_values(const WeightView& w, const PackedLayout& l, std::uint8_t* data) {
  if (w.scheme == WeightScheme::kF32) {
    pack_values_as(w, l, reinterpret_cast<float*>(data));
  } else {
    pack_values_as(w, l, reinterpret_cast<std::uint16_t*>(data));
  }
}

void pack_params(const WeightView& w, const PackedLayout& l, std::uint16_t* scales, std::uint8_t* zeros) {
  const std::size_t R = l.tile_rows;
  for (std::size_t row = 0; row < w.out; ++row) {
    const std::size_t t = row / R, r = row % R;
    for (std::size_t g = 0; g < l.groups; ++g) {
      const std::size_t index = (t * l.groups + g) * R + r;
      scales[index] = w.scales[row * l.groups + g];
      if (zeros) zeros[index] = static_cast<std::uint8_t>(read_params(w, row, g).zero_point);
    }
  }
}

}  // namespace

PackedLayout packed_layout(Isa isa, WeightScheme scheme, std::size_t out, std::size_t in, std::size_t group_size) {
  PackedLayout l;
  l.isa = isa;
  l.scheme = scheme;
  l.out = out;
  l.in = in;
  l.group_size = is_float_scheme(scheme) ? in : group_size;
  l.groups = is_float_scheme(scheme) ? 1 : num_groups(in, group_size);
  if (isa != Isa::kScalar && !is_float_scheme(scheme) && group_size < in && group_size % 32 != 0) {
    fail(ErrorKind::kUnsupported,
         "group size {} is not supported by the {} kernels (accepted: multiples of 32, or the "
         "input width {} for per-channel); compile with ISA scalar to run it",
         group_size, isa_name(isa), in);
  }
  if (isa == Isa::kScalar) {
    l.tiles = out;
    l.k_padded = in;
    l.data_bytes = weight_data_bytes(scheme, out, in);
    l.scales_bytes = scale_bytes(scheme, out, in, l.group_size);
    l.zeros_bytes = zero_point_bytes(scheme, out, in, l.group_size);
  } else {
    l.tile_rows = isa == Isa::kAvx2 ? 8 : 16;
    l.tiles = (out + l.tile_rows - 1) / l.tile_rows;
    l.k_padded = round_up(in, kPackedKAlign);
    l.data_bytes = tile_data_bytes(scheme, l.tiles * l.tile_rows, l.k_padded);
    if (!is_float_scheme(scheme)) l.scales_bytes = l.tiles * l.groups * l.tile_rows * 2;
    if (has_zero_points(scheme)) l.zeros_bytes = l.tiles * l.groups * l.tile_rows;
  }
  l.data_offset = 0;
  l.scales_offset = round_up(l.data_bytes, 64);
  l.zeros_offset = l.scales_offset + round_up(l.scales_bytes, 64);
  l.total_bytes = l.zeros_offset + round_up(l.zeros_bytes, 64);
  return l;
}

WeightView PackedWeights::canonical_view() const {
  KILN_DASSERT(layout.isa == Isa::kScalar);
  return WeightView{layout.scheme,
                    layout.out,
                    layout.in,
                    layout.group_size,
                    data(),
                    layout.scales_bytes ? scales() : nullptr,
                    layout.zeros_bytes ? zeros() : nullptr};
}

void PackedMatrix::FreeDeleter::operator()(std::uint8_t* p) const { std::free(p); }

PackedMatrix::PackedMatrix(const PackedLayout& layout) : layout_(layout) {
  // Blobs of 2 MiB and more get 2 MiB-aligned memory with transparent huge pages asked for
  // before the first touch, as the runtime maps its packed weights: a GEMV streaming 4 KiB pages
  // pays page walks and restarts of the hardware prefetcher at every page.
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const bool huge = layout.total_bytes >= kHugePage;
  const std::size_t align = huge ? kHugePage : 64;
  const std::size_t bytes = (std::max<std::size_t>(layout.total_bytes, 64) + align - 1) / align * align;
  blob_.reset(static_cast<std::uint8_t*>(std::aligned_alloc(align, bytes)));
  if (!blob_) fail(ErrorKind::kIo, "cannot allocate {} bytes for a packed weight matrix", bytes);
  if (huge) ::madvise(blob_.get(), bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
  std::memset(blob_.get(), 0, bytes);
}

void pack_weights_into(const WeightView& w, const PackedLayout& layout, std::span<std::uint8_t> blob,
                       std::string_view name) {
  validate_weight_view(w, name);
  const PackedLayout expected = packed_layout(layout.isa, w.scheme, w.out, w.in, w.group_size);
  if (expected.total_bytes != layout.total_bytes || expected.tile_rows != layout.tile_rows ||
      expected.k_padded != layout.k_padded || blob.size() < layout.total_bytes) {
    fail(ErrorKind::kInternal,
         "tensor '{}': packed layout or blob ({} bytes) does not match the "
         "matrix ({} bytes expected)",
         name, blob.size(), expected.total_bytes);
  }
  std::uint8_t* out = blob.data();
  std::memset(out, 0, layout.total_bytes);  // padding rows, columns and sections are zero
  if (layout.isa == Isa::kScalar) {
    std::memcpy(out + layout.data_offset, w.data, layout.data_bytes);
    if (layout.scales_bytes) std::memcpy(out + layout.scales_offset, w.scales, layout.scales_bytes);
    if (layout.zeros_bytes) std::memcpy(out + layout.zeros_offset, w.zero_points, layout.zeros_bytes);
  } else if (is_float_scheme(w.scheme)) {
    pack_values(w, layout, out + layout.data_offset);
  } else {
    pack_codes(w, layout, out + layout.data_offset);
    pack_params(w, layout, reinterpret_cast<std::uint16_t*>(out + layout.scales_offset),
                layout.zeros_bytes ? out + layout.zeros_offset : nullptr);
  }
}

PackedMatrix pack_weights(const WeightView& w, Isa isa, std::string_view name) {
  validate_weight_view(w, name);
  PackedLayout layout;
  try {
    layout = packed_layout(isa, w.scheme, w.out, w.in, w.group_size);
  } catch (const Error& e) {
    fail(e.kind(), "tensor '{}': {}", name, e.what());
  }
  PackedMatrix packed(layout);
  pack_weights_into(w, layout, std::span<std::uint8_t>(packed.mutable_blob(), layout.total_bytes), name);
  return packed;
}

}  // namespace kiln::kernels
