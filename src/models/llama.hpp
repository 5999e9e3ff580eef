// The Llama family's forward pass (Llama 2/3/3.1/3.2, TinyLlama, SmolLM, and the classes built
// the same way: Qwen2/2.5, Qwen3, Mistral, Phi-3): embedding, then per layer RMSNorm → attention
// (GQA, RoPE, optional q/k biases, per-head q/k norms, sliding window) → residual → RMSNorm →
// SwiGLU MLP → residual, then the final norm and a tied or separate head. Written once over
// models::Ops; the variations are fields of ir::ModelConfig.
#pragma once

#include <memory>
#include <vector>

#include "ir/tensor_source.hpp"
#include "models/language_model.hpp"
#include "models/ops.hpp"

namespace kiln::models {

class LlamaModel final : public LanguageModel {
 public:
  // Validates the source's tensors against the config, loads them through `ops` and allocates
  // the KV cache with `kv_layout` (its model-dependent fields are filled in here). `source`
  // must stay alive: backends may keep views into its mapped files.
  LlamaModel(const ir::ModelConfig& config, std::shared_ptr<const ir::TensorSource> source, std::unique_ptr<Ops> ops,
             KvCacheLayout kv_layout);

  const ir::ModelConfig& config() const override { return config_; }
  const KvCacheLayout& kv_cache_layout() const override { return ops_->kv_cache_layout(); }
  void step(std::span<const SequenceChunk> batch, StepOutput& out) override;
  void copy_blocks(std::span<const KvBlockCopy> copies) override { ops_->copy_kv_blocks(copies); }

 private:
  struct Layer {
    std::unique_ptr<Weight> attn_norm, wq, wk, wv, wo, bq, bk, bv, bo, q_norm, k_norm;
    std::unique_ptr<Weight> mlp_norm, w_gate, w_up, w_down, b_gate, b_up, b_down;
  };

  // Scratch buffers, grown to the largest step seen and then reused (no allocation per token):
  // host inputs of the step, then activations in the backend's memory.
  struct Workspace {
    std::vector<std::int32_t> ids;         // [rows]
    std::vector<std::int64_t> positions;   // [rows]
    std::vector<std::int64_t> slots;       // [rows]
    std::vector<float> cos, sin;           // [rows, rotary_dim / 2]
    std::vector<std::int64_t> logit_rows;  // [logit rows]: the step's rows whose logits are wanted
    using Buffer = std::unique_ptr<ActivationMemory>;
    Buffer residual;       // [rows, hidden]
    Buffer normed;         // [rows, hidden]
    Buffer q;              // [rows, heads * head_dim]
    Buffer k, v;           // [rows, kv_heads * head_dim]
    Buffer attn;           // [rows, heads * head_dim]
    Buffer proj;           // [rows, hidden]
    Buffer gate, up;       // [rows, intermediate]
    Buffer kept_attn;      // [logit rows, heads * head_dim]: the last layer's rows that go on
    Buffer kept_residual;  // [logit rows, hidden]
    Buffer head_in;        // [logit rows, hidden]
    Buffer logits;         // [logit rows, vocab]
  };

  std::unique_ptr<Weight> load(const std::string& name, WeightUse use);
  // Fails on a position the RoPE setup cannot encode (LongRoPE beyond its original context).
  void check_position(std::int64_t pos) const;
  void prepare_rows(std::span<const SequenceChunk> batch, std::vector<AttentionSequence>& sequences);
  void select_logit_rows(std::span<const SequenceChunk> batch);
  // `floats` activations of `buffer`, reallocated when smaller (contents are then undefined).
  Activations grow(Workspace::Buffer& buffer, std::int64_t floats);
  // Returns the rows in ws_.proj: all of them, or with `logit_rows_only` the logit rows, which
  // then are ws_.residual's rows too.
  std::int64_t run_layer(const Layer& layer, std::int64_t index, std::int64_t rows,
                         std::span<const AttentionSequence> sequences, bool logit_rows_only);
  // Keeps the logit rows of attn [rows, q_dim] (in ws_.kept_attn) and of the residual (which
  // becomes them); returns how many.
  std::int64_t keep_logit_rows(Activations attn);
  // `compacted`: the residual holds the logit rows alone, in order.
  void compute_logits(bool compacted, StepOutput& out);

  ir::ModelConfig config_;
  std::shared_ptr<const ir::TensorSource> source_;
  std::unique_ptr<Ops> ops_;
  std::vector<double> inv_freq_;
  std::unique_ptr<Weight> embedding_, final_norm_, head_;
  std::vector<Layer> layers_;
  Workspace ws_;
  std::vector<AttentionSequence> sequences_;
};

}  // namespace kiln::models
