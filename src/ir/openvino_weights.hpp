// The weights of an OpenVINO IR as the graph decompresses them. optimum-cli (NNCF) stores a
// compressed weight as a subgraph feeding the MatMul or Gather that uses it:
//
//   Const codes (u8 / i8 / u4 / i4 / nf4) -> Convert -> [Subtract (Convert <- Const zero point)]
//     -> Multiply (Const scale, f16) -> [Reshape [out, groups, group] to [out, in]] -> [Convert f32]
//
// and an uncompressed one as Const (f32 / f16 / bf16) -> [Convert f32]. trace_weight follows that
// path from the consumer back to the Consts; anything else on it (another op, a scale that is not
// per row or per row group, a transposed weight) is refused naming the layer, as kiln could not
// reproduce what the graph computes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/openvino_graph.hpp"

namespace kiln::ir {

struct OvWeight {
  const OvLayer* codes = nullptr;       // the Const of values (float weights) or integer codes
  const OvLayer* zero_point = nullptr;  // a Const, when the graph subtracts one
  const OvLayer* scale = nullptr;       // a Const, for quantised weights
  std::vector<std::int64_t> shape;      // [out, in] as the consumer reads it (1-D for vectors)
  std::int64_t group_size = 0;          // columns a scale covers (in: per row); quantised only
};

// The weight a Linear's MatMul (input 1, transpose_b) multiplies by.
OvWeight trace_matmul_weight(const OvGraph& graph, const OvLayer& matmul);
// The table an embedding's Gather (input 0, axis 0) reads rows from.
OvWeight trace_gather_weight(const OvGraph& graph, const OvLayer& gather);
// A constant vector (a norm's gamma, a bias) an elementwise layer applies: input `index`, through
// Converts, to a float Const whose size is its number of elements (leading 1s dropped).
OvWeight trace_vector(const OvGraph& graph, const OvLayer& layer, std::size_t index);

}  // namespace kiln::ir
