// Oracles: the safetensors / model.json spelling of every element type parses back to it; byte
// counts follow the bit widths (4-bit types round up to whole bytes); the KV precisions are
// exactly f32, f16, bf16 and u8, in the spelling KV_CACHE_PRECISION takes.
#include "util/element_type.hpp"

#include <gtest/gtest.h>

namespace kiln {
namespace {

constexpr ElementType kAll[] = {ElementType::kF64, ElementType::kF32, ElementType::kF16, ElementType::kBf16,
                                ElementType::kI64, ElementType::kI32, ElementType::kI16, ElementType::kI8,
                                ElementType::kU8,  ElementType::kI4,  ElementType::kU4,  ElementType::kBool};

TEST(ElementType, NamesRoundTrip) {
  for (ElementType t : kAll) EXPECT_EQ(parse_element_type(element_type_name(t)), t);
  EXPECT_EQ(element_type_name(ElementType::kBf16), "BF16");
  EXPECT_EQ(parse_element_type("bf16"), std::nullopt);  // file spellings are upper case
  EXPECT_EQ(parse_element_type("F8_E4M3"), std::nullopt);
}

TEST(ElementType, Bytes) {
  EXPECT_EQ(element_bytes(ElementType::kF64, 3), 24u);
  EXPECT_EQ(element_bytes(ElementType::kBf16, 3), 6u);
  EXPECT_EQ(element_bytes(ElementType::kBool, 3), 3u);
  EXPECT_EQ(element_bytes(ElementType::kU4, 3), 2u);
  EXPECT_EQ(element_bytes(ElementType::kI4, 4), 2u);
  EXPECT_EQ(element_bytes(ElementType::kI4, 0), 0u);
  EXPECT_EQ(element_bytes(ElementType::kF32), 4u);
}

TEST(ElementType, FloatWeightTypes) {
  int floats = 0;
  for (ElementType t : kAll) floats += is_float_weight_type(t) ? 1 : 0;
  EXPECT_EQ(floats, 3);
  EXPECT_TRUE(is_float_weight_type(ElementType::kBf16));
  EXPECT_FALSE(is_float_weight_type(ElementType::kF64));
}

TEST(ElementType, KvPrecisions) {
  int kv = 0;
  for (ElementType t : kAll) {
    if (!is_kv_precision(t)) continue;
    ++kv;
    EXPECT_EQ(parse_kv_precision(kv_precision_name(t)), t);
  }
  EXPECT_EQ(kv, 4);
  EXPECT_EQ(kv_precision_name(ElementType::kU8), "u8");
  EXPECT_EQ(parse_kv_precision("U8"), std::nullopt);
  EXPECT_EQ(parse_kv_precision("i8"), std::nullopt);
}

}  // namespace
}  // namespace kiln
