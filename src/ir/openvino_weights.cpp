#include "ir/openvino_weights.hpp"

#include <cstring>

#include "util/error.hpp"

namespace kiln::ir {
namespace {

bool is_float_type(std::string_view t) { return t == "f32" || t == "f16" || t == "bf16"; }
bool is_code_type(std::string_view t) { return t == "u8" || t == "i8" || t == "u4" || t == "i4" || t == "nf4"; }

const OvLayer& skip_converts(const OvGraph& graph, const OvLayer* layer) {
  while (layer->type == "Convert") layer = &graph.input(*layer, 0);
  return *layer;
}

// The Const at the end of `layer`'s Converts, of a type `accept` allows; anything else fails,
// naming the consumer whose weight this is.
const OvLayer& const_through_converts(const OvGraph& graph, const OvLayer& layer, bool (*accept)(std::string_view),
                                      const OvLayer& consumer, std::string_view role) {
  const OvLayer& end = skip_converts(graph, &layer);
  if (end.type != "Const") {
    fail(ErrorKind::kUnsupported, "{}: the {} of {}'s weight is computed by {}; kiln reads it only from a Const",
         graph.describe(consumer), role, consumer.name, graph.describe(end));
  }
  const std::string& type = graph.attribute(end, "element_type");
  if (!accept(type))
    fail(ErrorKind::kUnsupported, "{}: element type {} for a weight's {}", graph.describe(end), type, role);
  return end;
}

// The [out, in] weight the decompression subgraph ending at `top` gives `consumer`.
OvWeight trace_matrix(const OvGraph& graph, const OvLayer& top, const OvLayer& consumer) {
  OvWeight w;
  const OvLayer* layer = &top;
  const OvLayer* reshape = nullptr;
  while (layer->type == "Convert" || layer->type == "Reshape") {
    if (layer->type == "Reshape") {
      if (reshape != nullptr) fail(ErrorKind::kUnsupported, "{}: a second Reshape on a weight", graph.describe(*layer));
      reshape = layer;
    }
    layer = &graph.input(*layer, 0);
  }
  if (layer->type == "Multiply") {
    const OvLayer& a = skip_converts(graph, &graph.input(*layer, 0));
    const OvLayer& b = skip_converts(graph, &graph.input(*layer, 1));
    const bool b_is_scale = b.type == "Const" && is_float_type(graph.attribute(b, "element_type"));
    const OvLayer& scale_side = b_is_scale ? graph.input(*layer, 1) : graph.input(*layer, 0);
    w.scale = &const_through_converts(graph, scale_side, is_float_type, consumer, "scale");
    const OvLayer* codes_side = &skip_converts(graph, b_is_scale ? &a : &b);
    if (codes_side->type == "Subtract") {
      w.zero_point = &const_through_converts(
          graph, graph.input(*codes_side, 1), [](std::string_view t) { return is_code_type(t) || is_float_type(t); },
          consumer, "zero point");
      codes_side = &graph.input(*codes_side, 0);
    }
    w.codes = &const_through_converts(graph, *codes_side, is_code_type, consumer, "codes");
  } else if (layer->type == "Const") {
    w.codes = &const_through_converts(graph, *layer, is_float_type, consumer, "values");
  } else {
    fail(ErrorKind::kUnsupported,
         "{}: on the weight path of '{}'; kiln reads weights as Const -> Convert -> [Subtract zero point] -> "
         "Multiply scale -> [Reshape], or as a float Const",
         graph.describe(*layer), consumer.name);
  }

  const OvConstant codes = graph.constant(*w.codes);
  if (codes.shape.size() == 2) {
    w.shape = codes.shape;
  } else if (codes.shape.size() == 3 && w.scale != nullptr) {
    w.shape = {codes.shape[0], codes.shape[1] * codes.shape[2]};
  } else {
    fail(ErrorKind::kUnsupported, "{}: a weight of shape [{}] (kiln reads [out, in], or [out, groups, group] codes)",
         graph.describe(*w.codes), fmt::join(codes.shape, ", "));
  }
  if (reshape != nullptr && (reshape->output_dims.empty() || reshape->output_dims[0] != w.shape)) {
    fail(ErrorKind::kUnsupported, "{}: does not reshape the weight to [{}]", graph.describe(*reshape),
         fmt::join(w.shape, ", "));
  }
  if (w.scale == nullptr) return w;

  // Scales (and zero points) hold one value per row and group: [out, groups, 1] or [out, 1].
  const std::int64_t groups = codes.shape.size() == 3 ? codes.shape[1] : 1;
  w.group_size = w.shape[1] / groups;
  const auto per_group = [&](const OvLayer& c, bool scalar_allowed) {
    const OvConstant k = graph.constant(c);
    const std::int64_t n = k.num_elements();
    const bool full = n == w.shape[0] * groups && !k.shape.empty() && k.shape[0] == w.shape[0] && k.shape.back() == 1;
    if (!full && !(scalar_allowed && n == 1)) {
      fail(ErrorKind::kUnsupported,
           "{}: shape [{}] for a weight of [{}] in groups of {} (expected one value per row and group: [{}, {}, 1])",
           graph.describe(c), fmt::join(k.shape, ", "), fmt::join(w.shape, ", "), w.group_size, w.shape[0], groups);
    }
  };
  per_group(*w.scale, false);
  if (w.zero_point != nullptr) per_group(*w.zero_point, true);
  return w;
}

}  // namespace

OvWeight trace_matmul_weight(const OvGraph& graph, const OvLayer& matmul) {
  if (graph.attribute(matmul, "transpose_a") != "false" || graph.attribute(matmul, "transpose_b") != "true") {
    fail(ErrorKind::kUnsupported, "{}: kiln reads a Linear's MatMul as transpose_a=false, transpose_b=true",
         graph.describe(matmul));
  }
  return trace_matrix(graph, graph.input(matmul, 1), matmul);
}

OvWeight trace_gather_weight(const OvGraph& graph, const OvLayer& gather) {
  const auto batch_dims = gather.data.find("batch_dims");
  if (batch_dims != gather.data.end() && batch_dims->second != "0") {
    fail(ErrorKind::kUnsupported, "{}: an embedding Gather with batch_dims {}", graph.describe(gather),
         batch_dims->second);
  }
  return trace_matrix(graph, graph.input(gather, 0), gather);
}

OvWeight trace_vector(const OvGraph& graph, const OvLayer& layer, std::size_t index) {
  OvWeight w;
  w.codes = &const_through_converts(graph, graph.input(layer, index), is_float_type, layer, "values");
  std::vector<std::int64_t> shape = graph.constant(*w.codes).shape;
  while (shape.size() > 1 && shape.front() == 1) shape.erase(shape.begin());
  if (shape.size() != 1) {
    fail(ErrorKind::kUnsupported, "{}: shape [{}] where kiln expects a vector", graph.describe(*w.codes),
         fmt::join(shape, ", "));
  }
  w.shape = shape;
  return w;
}

}  // namespace kiln::ir
