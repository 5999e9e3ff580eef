// Compresses and writes the planned tensors in model order. Round to nearest streams each tensor
// from the mapped checkpoint; AWQ works a decoder layer at a time (its pairs: input norm → q/k/v,
// post-attention norm → gate/up, up → down, and v → o when every head has its own KV head), holding
// that layer's affected tensors in f32 until written; scale estimation and GPTQ take one matrix in
// f32 at a time. Returns, per tensor, the method used (for the manifest).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "export/activation_statistics.hpp"
#include "export/export_options.hpp"
#include "export/precision_plan.hpp"
#include "ir/ir_writer.hpp"
#include "ir/tensor_source.hpp"

namespace kiln::exporter {

class LayerCompressor {
 public:
  LayerCompressor(const ir::TensorSource& source, const ExportRecipe& recipe,
                  const std::map<std::string, std::shared_ptr<InputStatistics>>& statistics, ir::IrWriter& writer,
                  ThreadPool* pool = nullptr);

  // Writes plan[index] (tensors must come in plan order); returns e.g. "rtn", "awq+gptq".
  std::string write(const std::vector<TensorPlan>& plan, std::size_t index);

 private:
  void prepare_layer(const std::vector<TensorPlan>& plan, std::int64_t layer);
  void apply_awq_pair(const std::map<std::string, const TensorPlan*>& by_name, const std::string& prev,
                      const std::vector<std::string>& targets);
  std::vector<float>& f32(const std::string& name);
  InputStatistics* statistics(const std::string& name) const;

  const ir::TensorSource& source_;
  const ExportRecipe& recipe_;
  const std::map<std::string, std::shared_ptr<InputStatistics>>& statistics_;
  ir::IrWriter& writer_;
  ThreadPool* pool_;  // AWQ's search (may be null)
  std::int64_t prepared_layer_ = -1;
  std::map<std::string, std::vector<float>> f32_;   // this layer's tensors changed by AWQ, [out, in]
  std::map<std::string, std::string> awq_applied_;  // tensor → "awq" when scaled
};

}  // namespace kiln::exporter
