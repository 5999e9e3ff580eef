#include "ir/gguf_weight_import.hpp"

#include <cstring>
#include <numeric>

#include "ir/gguf_dequantize.hpp"
#include "util/error.hpp"

namespace kiln::ir {
namespace {

constexpr std::size_t kBlock = 32;  // elements of a Q8_0 or Q4_0 block

struct Geometry {
  std::size_t out = 0;
  std::size_t in = 0;
  std::size_t row_bytes = 0;
};

// Checks that every row asked for exists.
Geometry geometry(const GgufTensor& t, std::span<const std::size_t> rows) {
  Geometry g;
  g.in = t.dims.at(0);
  g.out = t.dims.size() > 1 ? t.dims[1] : 1;
  for (const std::size_t r : rows) {
    if (t.dims.size() > 2 || r >= g.out) {
      fail(ErrorKind::kInternal, "tensor '{}': row {} asked of a {}-row tensor", t.name, r, g.out);
    }
  }
  g.row_bytes = t.bytes.size() / g.out;
  return g;
}

void require_every_row(const GgufTensor& t, const Geometry& g, std::span<const std::size_t> row_order) {
  if (row_order.size() != g.out) fail(ErrorKind::kInternal, "tensor '{}': every row must be imported", t.name);
}

std::uint16_t read_u16(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

}  // namespace

std::optional<WeightScheme> exact_kiln_scheme(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: return WeightScheme::kF32;
    case GgmlType::kF16: return WeightScheme::kF16;
    case GgmlType::kBF16: return WeightScheme::kBf16;
    case GgmlType::kQ8_0: return WeightScheme::kInt8Sym;
    case GgmlType::kQ4_0: return WeightScheme::kInt4Sym;
    default: return std::nullopt;
  }
}

QuantizedMatrix import_exact_blocks(const GgufTensor& t, std::span<const std::size_t> row_order) {
  const Geometry g = geometry(t, row_order);
  require_every_row(t, g, row_order);
  const bool q8 = t.type == GgmlType::kQ8_0;
  if (!q8 && t.type != GgmlType::kQ4_0) fail(ErrorKind::kInternal, "tensor '{}': not Q8_0 or Q4_0", t.name);
  const std::size_t block_bytes = q8 ? 34 : 18;  // an f16 scale, then 32 codes
  QuantizedMatrix m(q8 ? WeightScheme::kInt8Sym : WeightScheme::kInt4Sym, g.out, g.in, kBlock);
  const std::size_t groups = g.in / kBlock;
  for (std::size_t r = 0; r < g.out; ++r) {
    const std::uint8_t* row = t.bytes.data() + row_order[r] * g.row_bytes;
    for (std::size_t b = 0; b < groups; ++b) {
      const std::uint8_t* block = row + b * block_bytes;
      m.scales()[r * groups + b] = read_u16(block);
      const std::size_t first = r * g.in + b * kBlock;
      if (q8) {
        std::memcpy(m.data().data() + first, block + 2, kBlock);
        continue;
      }
      // Q4_0 keeps element e in the low nibble of byte e and element e + 16 in the high one, as
      // q = code + 8; kiln stores the signed code (q with its top bit flipped), two per byte in
      // element order. A row starts on a byte: `in` is a multiple of 32.
      std::uint8_t* out = m.data().data() + first / 2;
      const std::uint8_t* q = block + 2;
      for (std::size_t j = 0; j < kBlock / 4; ++j) {
        out[j] = static_cast<std::uint8_t>(((q[2 * j] & 0x0F) | (q[2 * j + 1] << 4)) ^ 0x88);
        out[j + kBlock / 4] = static_cast<std::uint8_t>(((q[2 * j] >> 4) | (q[2 * j + 1] & 0xF0)) ^ 0x88);
      }
    }
  }
  return m;
}

std::vector<std::uint8_t> reorder_float_rows(const GgufTensor& t, std::span<const std::size_t> row_order) {
  const Geometry g = geometry(t, row_order);
  require_every_row(t, g, row_order);
  std::vector<std::uint8_t> out(t.bytes.size());
  for (std::size_t r = 0; r < g.out; ++r) {
    std::memcpy(out.data() + r * g.row_bytes, t.bytes.data() + row_order[r] * g.row_bytes, g.row_bytes);
  }
  return out;
}

std::vector<float> decode_rows(const GgufTensor& t, std::span<const std::size_t> rows) {
  const Geometry g = geometry(t, rows);
  std::vector<float> out(rows.size() * g.in);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    dequantize_gguf(t.type, t.bytes.subspan(rows[r] * g.row_bytes, g.row_bytes),
                    std::span<float>(out).subspan(r * g.in, g.in));
  }
  return out;
}

std::vector<std::size_t> unpermute_rows(std::size_t rows, std::size_t heads) {
  const std::size_t head_dim = rows / heads;
  const std::size_t half = head_dim / 2;
  std::vector<std::size_t> order(rows);
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t j = 0; j < half; ++j) {
      order[h * head_dim + j] = h * head_dim + 2 * j;
      order[h * head_dim + half + j] = h * head_dim + 2 * j + 1;
    }
  }
  return order;
}

std::vector<std::size_t> identity_rows(std::size_t rows) {
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), std::size_t{0});
  return order;
}

}  // namespace kiln::ir
