// Oracle: packed layouts decoded by hand from packed_weights.hpp's description: the byte that
// holds a given (row, column) in each ISA's layout, the stored offsets (int4_sym + 8, int8_sym
// + 128 on avx512, int8_asym - 128 on avx2), zero padding, and the section sizes.
#include "kernels/packed_weights.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "support/test_support.hpp"
#include "util/half.hpp"

namespace kiln::kernels {
namespace {

// A [3, 70] int4_sym matrix whose code at (r, k) is ((r * 7 + k) % 16) - 8.
QuantizedMatrix int4_pattern() {
  QuantizedMatrix m(WeightScheme::kInt4Sym, 3, 70, 32);
  for (std::size_t r = 0; r < 3; ++r) {
    for (std::size_t k = 0; k < 70; ++k) m.set_code(r, k, int((r * 7 + k) % 16) - 8);
    for (std::size_t g = 0; g < 3; ++g) m.set_params(r, g, QuantParams{0.25f * float(r + g + 1), 0});
  }
  return m;
}

TEST(PackedWeights, Int4TileLayoutByHand) {
  const QuantizedMatrix m = int4_pattern();
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const PackedMatrix p = pack_weights(m.view(), isa, "w");
    const PackedLayout& l = p.layout();
    const std::size_t R = isa == Isa::kAvx2 ? 8 : 16;
    EXPECT_EQ(l.tile_rows, R);
    EXPECT_EQ(l.k_padded, 128u);
    EXPECT_EQ(l.data_bytes, R * 128 / 2);
    EXPECT_EQ(l.scales_bytes, 3 * R * 2);
    const std::uint8_t* d = p.view().data();
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t k = 0; k < 128; ++k) {
        const std::uint8_t byte = d[((k / 8) * R + r) * 4 + k % 4];
        const unsigned nibble = (k % 8 < 4) ? byte & 0xF : byte >> 4;
        const unsigned want = (r < 3 && k < 70) ? unsigned(int((r * 7 + k) % 16) - 8 + 8) : 0u;
        ASSERT_EQ(nibble, want) << isa_name(isa) << " row " << r << " k " << k;
      }
    }
    const std::uint16_t* s = p.view().scales();
    EXPECT_EQ(f16_to_f32(s[1 * R + 2]), 0.25f * 4);  // group 1, row 2
    EXPECT_EQ(s[0 * R + 5], 0);                      // padded row
  }
}

TEST(PackedWeights, Int8StoredOffsetsByHand) {
  QuantizedMatrix sym(WeightScheme::kInt8Sym, 2, 5, 5);
  QuantizedMatrix asym(WeightScheme::kInt8Asym, 2, 5, 5);
  for (std::size_t r = 0; r < 2; ++r) {
    for (std::size_t k = 0; k < 5; ++k) {
      sym.set_code(r, k, int(k) * 30 - 60 - int(r));
      asym.set_code(r, k, int(k) * 60 + int(r));
    }
    sym.set_params(r, 0, QuantParams{1.0f, 0});
    asym.set_params(r, 0, QuantParams{1.0f, 100 + int(r)});
  }
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const std::size_t R = isa == Isa::kAvx2 ? 8 : 16;
    const PackedMatrix ps = pack_weights(sym.view(), isa, "s");
    const PackedMatrix pa = pack_weights(asym.view(), isa, "a");
    for (std::size_t r = 0; r < 2; ++r) {
      for (std::size_t k = 0; k < 5; ++k) {
        const std::size_t at = ((k / 4) * R + r) * 4 + k % 4;
        const int s_code = int(k) * 30 - 60 - int(r), a_code = int(k) * 60 + int(r);
        EXPECT_EQ(ps.view().data()[at], std::uint8_t(isa == Isa::kAvx2 ? s_code : s_code + 128));
        EXPECT_EQ(pa.view().data()[at], std::uint8_t(isa == Isa::kAvx2 ? a_code - 128 : a_code));
      }
      EXPECT_EQ(pa.view().zeros()[r], 100 + r);  // zero points stay canonical, one byte per row
    }
  }
}

TEST(PackedWeights, Bf16PairsAndF32ColumnsByHand) {
  std::vector<float> w(3 * 5);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(i) + 0.5f;
  const QuantizedMatrix bf = quantize_weights(w, 3, 5, WeightScheme::kBf16, 0, "bf");
  const QuantizedMatrix f32 = quantize_weights(w, 3, 5, WeightScheme::kF32, 0, "f");
  const PackedMatrix pb = pack_weights(bf.view(), Isa::kAvx512, "bf");
  const PackedMatrix pf = pack_weights(f32.view(), Isa::kAvx2, "f");
  for (std::size_t r = 0; r < 3; ++r) {
    for (std::size_t k = 0; k < 5; ++k) {
      std::uint16_t h;
      std::memcpy(&h, pb.view().data() + (((k / 2) * 16 + r) * 2 + k % 2) * 2, 2);
      EXPECT_EQ(bf16_to_f32(h), w[r * 5 + k]);
      float f;
      std::memcpy(&f, pf.view().data() + (k * 8 + r) * 4, 4);
      EXPECT_EQ(f, w[r * 5 + k]);
    }
  }
}

// Packing into caller memory (dirty on purpose) gives the same bytes as pack_weights.
TEST(PackedWeights, PackIntoCallerMemoryMatches) {
  const QuantizedMatrix m = int4_pattern();
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    const PackedMatrix p = pack_weights(m.view(), isa, "w");
    std::vector<std::uint8_t> blob(p.layout().total_bytes, 0xAB);
    pack_weights_into(m.view(), p.layout(), blob, "w");
    EXPECT_EQ(std::memcmp(blob.data(), p.view().blob, blob.size()), 0) << isa_name(isa);
    std::vector<std::uint8_t> small(blob.size() - 1);
    EXPECT_KILN_ERROR(pack_weights_into(m.view(), p.layout(), small, "w"), "'w'", "does not match");
  }
}

TEST(PackedWeights, ScalarKeepsCanonicalBytes) {
  const QuantizedMatrix m = int4_pattern();
  const PackedMatrix p = pack_weights(m.view(), Isa::kScalar, "w");
  EXPECT_EQ(std::memcmp(p.view().data(), m.data().data(), m.data().size()), 0);
  EXPECT_EQ(std::memcmp(p.view().scales(), m.scales().data(), m.scales().size() * 2), 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.view().blob) % 64, 0u);
}

}  // namespace
}  // namespace kiln::kernels
