// How one element of a tensor is stored, for every tensor kiln reads or writes: a checkpoint's
// safetensors, the IR's model.bin entries, the paged KV cache. Names are the spelling of
// safetensors headers and model.json ("F32", "BF16", "I4"); the KV cache precision has its
// user-facing spelling too ("f32", "bf16", "u8"), as KV_CACHE_PRECISION takes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

// I4 / U4 pack two elements per byte over the flat index, the even index in the low nibble.
enum class ElementType : std::uint8_t { kF64, kF32, kF16, kBf16, kI64, kI32, kI16, kI8, kU8, kI4, kU4, kBool };

// "F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "I4", "U4", "BOOL".
std::string_view element_type_name(ElementType type);
// The spelling above; nullopt for anything else (the caller names the file and what it accepts).
std::optional<ElementType> parse_element_type(std::string_view name);

// Bytes that `count` elements occupy (4-bit types: rounded up to whole bytes).
std::uint64_t element_bytes(ElementType type, std::uint64_t count = 1);

// f32, f16 and bf16: the types a Hugging Face checkpoint's weights may use.
bool is_float_weight_type(ElementType type);

// The KV cache precisions: f32, f16, bf16 and u8 (u8 is asymmetric per group of values, with an
// f32 scale and minimum per group).
bool is_kv_precision(ElementType type);
// "f32", "f16", "bf16", "u8" for a KV precision.
std::string_view kv_precision_name(ElementType type);
// That spelling; nullopt for anything else (the caller names the flag or property).
std::optional<ElementType> parse_kv_precision(std::string_view name);

}  // namespace kiln
