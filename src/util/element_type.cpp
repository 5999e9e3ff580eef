#include "util/element_type.hpp"

#include <array>

namespace kiln {
namespace {

struct ElementInfo {
  ElementType type;
  std::string_view name;
  std::uint8_t bits;
};

// In enum order.
constexpr std::array<ElementInfo, 12> kElements{{
    {ElementType::kF64, "F64", 64},
    {ElementType::kF32, "F32", 32},
    {ElementType::kF16, "F16", 16},
    {ElementType::kBf16, "BF16", 16},
    {ElementType::kI64, "I64", 64},
    {ElementType::kI32, "I32", 32},
    {ElementType::kI16, "I16", 16},
    {ElementType::kI8, "I8", 8},
    {ElementType::kU8, "U8", 8},
    {ElementType::kI4, "I4", 4},
    {ElementType::kU4, "U4", 4},
    {ElementType::kBool, "BOOL", 8},
}};

const ElementInfo& info(ElementType type) { return kElements[static_cast<std::size_t>(type)]; }

constexpr std::array<ElementType, 4> kKvPrecisions{ElementType::kF32, ElementType::kF16, ElementType::kBf16,
                                                   ElementType::kU8};

}  // namespace

std::string_view element_type_name(ElementType type) { return info(type).name; }

std::optional<ElementType> parse_element_type(std::string_view name) {
  for (const ElementInfo& e : kElements) {
    if (e.name == name) return e.type;
  }
  return std::nullopt;
}

std::uint64_t element_bytes(ElementType type, std::uint64_t count) { return (count * info(type).bits + 7) / 8; }

bool is_float_weight_type(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF16 || type == ElementType::kBf16;
}

bool is_kv_precision(ElementType type) {
  for (ElementType t : kKvPrecisions) {
    if (t == type) return true;
  }
  return false;
}

std::string_view kv_precision_name(ElementType type) {
  switch (type) {
    case ElementType::kF32: return "f32";
    case ElementType::kF16: return "f16";
    case ElementType::kBf16: return "bf16";
    case ElementType::kU8: return "u8";
    default: return "unknown";
  }
}

std::optional<ElementType> parse_kv_precision(std::string_view name) {
  for (ElementType t : kKvPrecisions) {
    if (kv_precision_name(t) == name) return t;
  }
  return std::nullopt;
}

}  // namespace kiln
