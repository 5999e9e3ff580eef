// GGUF tensor data as floats: ggml's block formats (Q4_0 ... Q8_0, the K-quants Q2_K ... Q6_K)
// and F32 / F16 / BF16, decoded the way ggml's reference dequantisers do. Scalar code: it runs
// once when a model is imported, not per token.
#pragma once

#include <span>

#include "ir/gguf_file.hpp"

namespace kiln::ir {

// Decodes `bytes` (whole blocks of `type`) into `out`, which holds exactly as many elements.
// Throws kiln::Error when the sizes disagree or the type is one kiln cannot decode (Q8_1, Q8_K:
// ggml's intermediate formats, never a model's weights).
void dequantize_gguf(GgmlType type, std::span<const std::uint8_t> bytes, std::span<float> out);

}  // namespace kiln::ir
