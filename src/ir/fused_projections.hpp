// Phi-3 stores q/k/v as one qkv_proj [q_dim + 2 kv_dim, hidden] and gate/up as one gate_up_proj
// [2 intermediate, hidden]; kiln's forward pass, exporter and IR use the split names. The rows
// of a row-major matrix are contiguous, so each part is a view into the same mapped bytes.
#pragma once

#include <string>
#include <vector>

#include "ir/model_config.hpp"
#include "ir/tensor_view.hpp"

namespace kiln::ir {

struct SplitProjection {
  std::string fused_name;         // e.g. "model.layers.0.self_attn.qkv_proj.weight"
  std::vector<TensorView> parts;  // q_proj, k_proj, v_proj (or gate_proj, up_proj)
};

// The fused tensors of `config` found through `find` (absent ones are skipped: an already split
// checkpoint needs nothing), each cut into its parts. A fused tensor of the wrong shape fails,
// naming it and the shape the config implies.
template <typename Find>
std::vector<SplitProjection> split_fused_projections(const ModelConfig& config, Find&& find);

// One fused matrix cut along its rows: the parts' row counts must sum to its rows. A quantised
// one is cut with its scales and zero points; 4-bit rows must start on whole bytes.
SplitProjection split_rows(const TensorView& fused, const std::vector<std::pair<std::string, std::int64_t>>& parts,
                           const std::string& origin);

template <typename Find>
std::vector<SplitProjection> split_fused_projections(const ModelConfig& c, Find&& find) {
  std::vector<SplitProjection> out;
  if (!c.fused_projections) return out;
  for (std::int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    if (const TensorView* qkv = find(p + "self_attn.qkv_proj.weight")) {
      out.push_back(split_rows(*qkv,
                               {{p + "self_attn.q_proj.weight", c.q_dim()},
                                {p + "self_attn.k_proj.weight", c.kv_dim()},
                                {p + "self_attn.v_proj.weight", c.kv_dim()}},
                               c.architecture));
    }
    if (const TensorView* gate_up = find(p + "mlp.gate_up_proj.weight")) {
      out.push_back(split_rows(
          *gate_up,
          {{p + "mlp.gate_proj.weight", c.intermediate_size}, {p + "mlp.up_proj.weight", c.intermediate_size}},
          c.architecture));
    }
  }
  return out;
}

}  // namespace kiln::ir
