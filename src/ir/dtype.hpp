// Element types of stored tensors, named as safetensors names them ("F32", "BF16", ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ir {

enum class DType : std::uint8_t { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

// Bytes per element.
std::size_t dtype_size(DType dtype);

// "F32", "BF16", ...: the safetensors spelling.
std::string_view dtype_name(DType dtype);

// Parses the safetensors spelling; nullopt for anything else (the caller names the file).
std::optional<DType> parse_dtype(std::string_view name);

// f32, f16 and bf16: the types a Hugging Face checkpoint's weights may use.
bool is_float_weight_dtype(DType dtype);

}  // namespace kiln::ir
