// GGUF tensor data re-laid out as kiln's weights. Two of ggml's block formats hold exactly what a
// kiln scheme holds, and are copied bit for bit: Q8_0 (32 int8 codes and an f16 scale) is
// int8_sym and Q4_0 (32 nibbles q and an f16 scale, w = (q - 8) * d) is int4_sym, both with
// group 32. Every other quantised type (a float minimum, or scales of scales) has no exact kiln
// twin and is decoded to f32 for re-quantisation.
//
// Rows can be taken in any order, which is how llama.cpp's permutation of the q and k rows
// (its rotary layout for Llama) is undone.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "ir/gguf_file.hpp"
#include "ir/weight_format.hpp"

namespace kiln::ir {

// The kiln scheme that holds `type`'s values exactly, as group-32 codes and f16 scales, or as
// values (F32, F16, BF16); nullopt when there is none.
std::optional<WeightScheme> exact_kiln_scheme(GgmlType type);

// row_order[r] is the source row of row r (llama.cpp's q/k permutation: see unpermute_rows).
// Q8_0 or Q4_0 blocks as int8_sym / int4_sym codes and scales, unchanged.
QuantizedMatrix import_exact_blocks(const GgufTensor& tensor, std::span<const std::size_t> row_order);

// F32, F16 or BF16 rows copied in `row_order` (bytes of [out, in] values of the same type).
std::vector<std::uint8_t> reorder_float_rows(const GgufTensor& tensor, std::span<const std::size_t> row_order);

// Any readable type decoded to f32: [rows.size(), in], row r being the tensor's row rows[r].
std::vector<float> decode_rows(const GgufTensor& tensor, std::span<const std::size_t> rows);

// The source row of each row of an un-permuted q or k projection ([heads * head_dim, ...]).
// llama.cpp's converter interleaves each head's two rotary halves (row h*d + j and h*d + d/2 + j
// become 2j and 2j + 1); this is the inverse.
std::vector<std::size_t> unpermute_rows(std::size_t rows, std::size_t heads);

// 0, 1, ..., rows - 1.
std::vector<std::size_t> identity_rows(std::size_t rows);

}  // namespace kiln::ir
