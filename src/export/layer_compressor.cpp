#include "export/layer_compressor.hpp"

#include <algorithm>

#include "export/awq.hpp"
#include "export/gptq.hpp"
#include "export/scale_estimation.hpp"
#include "export/tensor_writer.hpp"
#include "ir/tensor_convert.hpp"
#include "util/error.hpp"

namespace kiln::exporter {

LayerCompressor::LayerCompressor(const ir::TensorSource& source, const ExportRecipe& recipe,
                                 const std::map<std::string, std::shared_ptr<InputStatistics>>& statistics,
                                 ir::IrWriter& writer, ThreadPool* pool)
    : source_(source), recipe_(recipe), statistics_(statistics), writer_(writer), pool_(pool) {}

InputStatistics* LayerCompressor::statistics(const std::string& name) const {
  auto it = statistics_.find(name);
  return it == statistics_.end() ? nullptr : it->second.get();
}

std::vector<float>& LayerCompressor::f32(const std::string& name) {
  auto it = f32_.find(name);
  if (it != f32_.end()) return it->second;
  const ir::TensorView* t = source_.find(name);
  if (t == nullptr) fail(ErrorKind::kInternal, "export: tensor '{}' vanished", name);
  return f32_.emplace(name, ir::to_f32(*t)).first->second;
}

void LayerCompressor::apply_awq_pair(const std::map<std::string, const TensorPlan*>& by_name, const std::string& prev,
                                     const std::vector<std::string>& targets) {
  InputStatistics* stats = nullptr;
  for (const std::string& t : targets) {
    auto it = by_name.find(t);
    // AWQ helps 4-bit layers (NNCF skips the rest); every reader of the input must be one.
    if (it == by_name.end() || !it->second->primary) return;
    stats = statistics(t);
    if (stats == nullptr || stats->num_samples() == 0) return;
  }
  const std::size_t in = static_cast<std::size_t>(stats->in());
  std::vector<AwqTarget> awq_targets;
  for (const std::string& t : targets) {
    const TensorPlan& p = *by_name.at(t);
    awq_targets.push_back(
        {f32(t), static_cast<std::size_t>(p.spec.shape[0]), p.scheme, static_cast<std::size_t>(p.group_size)});
  }
  const std::vector<double> s = search_awq_scales(awq_targets, in, *stats, pool_);
  if (std::all_of(s.begin(), s.end(), [](double v) { return v == 1.0; })) return;
  scale_input_channels(awq_targets, in, s);
  // The producer of the input is divided by s: a norm gain, or the rows (and bias) of a matrix.
  std::vector<float>& producer = f32(prev);
  const std::size_t width = producer.size() / in;  // 1 for a gain, the matrix's in for rows
  for (std::size_t c = 0; c < in; ++c) {
    for (std::size_t k = 0; k < width; ++k)
      producer[c * width + k] = static_cast<float>(producer[c * width + k] / s[c]);
  }
  const std::string bias = prev.substr(0, prev.size() - std::string("weight").size()) + "bias";
  if (prev.ends_with(".weight") && by_name.contains(bias)) {
    std::vector<float>& b = f32(bias);
    for (std::size_t c = 0; c < in; ++c) b[c] = static_cast<float>(b[c] / s[c]);
    awq_applied_[bias] = "awq";
  }
  stats->rescale_channels(s);
  awq_applied_[prev] = "awq";
  for (const std::string& t : targets) awq_applied_[t] = "awq";
}

void LayerCompressor::prepare_layer(const std::vector<TensorPlan>& plan, std::int64_t layer) {
  prepared_layer_ = layer;
  f32_.clear();
  awq_applied_.clear();
  if (!recipe_.awq) return;
  std::map<std::string, const TensorPlan*> by_name;
  for (const TensorPlan& p : plan) {
    if (p.spec.layer == layer) by_name[p.spec.name] = &p;
  }
  const std::string l = fmt::format("model.layers.{}.", layer);
  apply_awq_pair(by_name, l + "input_layernorm.weight",
                 {l + "self_attn.q_proj.weight", l + "self_attn.k_proj.weight", l + "self_attn.v_proj.weight"});
  apply_awq_pair(by_name, l + "post_attention_layernorm.weight",
                 {l + "mlp.gate_proj.weight", l + "mlp.up_proj.weight"});
  apply_awq_pair(by_name, l + "mlp.up_proj.weight", {l + "mlp.down_proj.weight"});
  // v → o only without GQA: with shared KV heads one v channel feeds several o channels.
  const TensorPlan* v =
      by_name.contains(l + "self_attn.v_proj.weight") ? by_name.at(l + "self_attn.v_proj.weight") : nullptr;
  const TensorPlan* o =
      by_name.contains(l + "self_attn.o_proj.weight") ? by_name.at(l + "self_attn.o_proj.weight") : nullptr;
  if (v && o && v->spec.shape[0] == o->spec.shape[1]) {
    apply_awq_pair(by_name, l + "self_attn.v_proj.weight", {l + "self_attn.o_proj.weight"});
  }
}

std::string LayerCompressor::write(const std::vector<TensorPlan>& plan, std::size_t index) {
  const TensorPlan& p = plan[index];
  if (p.spec.layer >= 0 && p.spec.layer != prepared_layer_) prepare_layer(plan, p.spec.layer);
  const ir::TensorView* source = source_.find(p.spec.name);
  if (source == nullptr) fail(ErrorKind::kInternal, "export: tensor '{}' vanished", p.spec.name);
  const std::string awq = awq_applied_.contains(p.spec.name) ? "awq+" : "";
  InputStatistics* stats = statistics(p.spec.name);
  const bool data_aware = p.primary && stats != nullptr && (recipe_.gptq || recipe_.scale_estimation);
  std::string method;
  if (data_aware) {
    std::vector<float> w = f32_.contains(p.spec.name) ? std::move(f32_.at(p.spec.name)) : ir::to_f32(*source);
    const auto out = static_cast<std::size_t>(p.spec.shape[0]);
    const auto in = static_cast<std::size_t>(p.spec.shape[1]);
    const auto gs = static_cast<std::size_t>(p.group_size);
    if (recipe_.gptq) {
      write_quantized(
          writer_, p,
          quantize_gptq(std::move(w), out, in, p.scheme, gs, *stats, recipe_.scale_estimation, p.spec.name));
      method = awq + (recipe_.scale_estimation ? "gptq+scale_estimation" : "gptq");
    } else {
      write_quantized(writer_, p, quantize_with_scale_estimation(w, out, in, p.scheme, gs, *stats, p.spec.name, pool_));
      method = awq + "scale_estimation";
    }
  } else if (f32_.contains(p.spec.name)) {
    write_f32(writer_, p, f32_.at(p.spec.name));
    method = awq + (is_float_scheme(p.scheme) ? "convert" : "rtn");
  } else {
    write_streamed(writer_, p, *source);
    method = is_float_scheme(p.scheme) ? "convert" : "rtn";
  }
  f32_.erase(p.spec.name);
  release_source_pages(*source);
  return method;
}

}  // namespace kiln::exporter
