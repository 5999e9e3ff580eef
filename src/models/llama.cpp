#include "models/llama.hpp"

#include <algorithm>
#include <cmath>

#include "models/rope.hpp"
#include "models/tensor_specs.hpp"
#include "util/error.hpp"

namespace kiln::models {
namespace {

template <typename T>
T* grow(std::vector<T>& buffer, std::int64_t count) {
  if (buffer.size() < static_cast<std::size_t>(count)) buffer.resize(static_cast<std::size_t>(count));
  return buffer.data();
}

}  // namespace

Activations LlamaModel::grow(Workspace::Buffer& buffer, std::int64_t floats) {
  if (!buffer || buffer->size() < floats) buffer = ops_->allocate_activations(floats);
  return {buffer.get()};
}

LlamaModel::LlamaModel(const ir::ModelConfig& config, std::shared_ptr<const ir::TensorSource> source,
                       std::unique_ptr<Ops> ops, KvCacheLayout kv_layout)
    : config_(config), source_(std::move(source)), ops_(std::move(ops)), inv_freq_(rope_inverse_frequencies(config)) {
  validate_tensors(config_, *source_);
  embedding_ = load("model.embed_tokens.weight", WeightUse::kEmbedding);
  layers_.resize(static_cast<std::size_t>(config_.num_layers));
  for (std::int64_t l = 0; l < config_.num_layers; ++l) {
    Layer& layer = layers_[static_cast<std::size_t>(l)];
    const std::string p = fmt::format("model.layers.{}.", l);
    layer.attn_norm = load(p + "input_layernorm.weight", WeightUse::kVector);
    layer.wq = load(p + "self_attn.q_proj.weight", WeightUse::kMatrix);
    layer.wk = load(p + "self_attn.k_proj.weight", WeightUse::kMatrix);
    layer.wv = load(p + "self_attn.v_proj.weight", WeightUse::kMatrix);
    layer.wo = load(p + "self_attn.o_proj.weight", WeightUse::kMatrix);
    if (config_.attention_bias) {
      layer.bq = load(p + "self_attn.q_proj.bias", WeightUse::kVector);
      layer.bk = load(p + "self_attn.k_proj.bias", WeightUse::kVector);
      layer.bv = load(p + "self_attn.v_proj.bias", WeightUse::kVector);
    }
    if (config_.attention_output_bias) layer.bo = load(p + "self_attn.o_proj.bias", WeightUse::kVector);
    if (config_.qk_norm) {
      layer.q_norm = load(p + "self_attn.q_norm.weight", WeightUse::kVector);
      layer.k_norm = load(p + "self_attn.k_norm.weight", WeightUse::kVector);
    }
    layer.mlp_norm = load(p + "post_attention_layernorm.weight", WeightUse::kVector);
    layer.w_gate = load(p + "mlp.gate_proj.weight", WeightUse::kMatrix);
    layer.w_up = load(p + "mlp.up_proj.weight", WeightUse::kMatrix);
    layer.w_down = load(p + "mlp.down_proj.weight", WeightUse::kMatrix);
    if (config_.mlp_bias) {
      layer.b_gate = load(p + "mlp.gate_proj.bias", WeightUse::kVector);
      layer.b_up = load(p + "mlp.up_proj.bias", WeightUse::kVector);
      layer.b_down = load(p + "mlp.down_proj.bias", WeightUse::kVector);
    }
  }
  final_norm_ = load("model.norm.weight", WeightUse::kVector);
  if (!config_.tie_word_embeddings) head_ = load("lm_head.weight", WeightUse::kMatrix);

  kv_layout.num_layers = config_.num_layers;
  kv_layout.num_kv_heads = config_.num_kv_heads;
  kv_layout.head_dim = config_.head_dim;
  if (kv_layout.num_blocks <= 0 || kv_layout.block_size <= 0) {
    fail("KV cache needs a positive number of blocks and block size, got {} blocks of {} tokens", kv_layout.num_blocks,
         kv_layout.block_size);
  }
  ops_->allocate_kv_cache(kv_layout);
}

std::unique_ptr<Weight> LlamaModel::load(const std::string& name, WeightUse use) {
  const ir::TensorView* t = source_->find(name);
  KILN_DASSERT(t != nullptr);  // validate_tensors() ran first
  return ops_->load_weight(*t, use);
}

void LlamaModel::prepare_rows(std::span<const SequenceChunk> batch, std::vector<AttentionSequence>& sequences) {
  const KvCacheLayout& kv = ops_->kv_cache_layout();
  sequences.clear();
  ws_.ids.clear();
  ws_.positions.clear();
  ws_.slots.clear();
  for (std::size_t s = 0; s < batch.size(); ++s) {
    const SequenceChunk& chunk = batch[s];
    const auto n = static_cast<std::int64_t>(chunk.tokens.size());
    const std::int64_t end = chunk.num_cached + n;
    const std::int64_t blocks_needed = (end + kv.block_size - 1) / kv.block_size;
    if (chunk.num_cached < 0 || static_cast<std::int64_t>(chunk.block_table.size()) < blocks_needed) {
      fail("sequence {} of the batch: its block table has {} blocks, but positions up to {} need {}", s,
           chunk.block_table.size(), end, blocks_needed);
    }
    sequences.push_back({static_cast<std::int64_t>(ws_.ids.size()), n, chunk.num_cached,
                         chunk.block_table.first(static_cast<std::size_t>(blocks_needed))});
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int32_t id = chunk.tokens[static_cast<std::size_t>(i)];
      if (id < 0 || id >= config_.vocab_size) {
        fail("token id {} is outside the vocabulary [0, {})", id, config_.vocab_size);
      }
      const std::int64_t pos = chunk.num_cached + i;
      check_position(pos);
      const std::int32_t block = chunk.block_table[static_cast<std::size_t>(pos / kv.block_size)];
      if (block < 0 || block >= kv.num_blocks) {
        fail("block id {} is outside the KV cache's {} blocks", block, kv.num_blocks);
      }
      ws_.ids.push_back(id);
      ws_.positions.push_back(pos);
      ws_.slots.push_back(static_cast<std::int64_t>(block) * kv.block_size + pos % kv.block_size);
    }
  }
}

void LlamaModel::check_position(std::int64_t pos) const {
  const ir::RopeScaling& s = config_.rope_scaling;
  if (s.type == ir::RopeScalingType::kLongRope && pos >= s.original_max_position_embeddings) {
    fail(ErrorKind::kUnsupported,
         "position {} is beyond original_max_position_embeddings ({}) of this {} model: that needs LongRoPE's "
         "long_factor, which kiln does not implement yet (use a context of at most {} tokens)",
         pos, s.original_max_position_embeddings, config_.architecture, s.original_max_position_embeddings);
  }
}

void LlamaModel::step(std::span<const SequenceChunk> batch, StepOutput& out) {
  prepare_rows(batch, sequences_);
  const auto rows = static_cast<std::int64_t>(ws_.ids.size());
  const std::int64_t hidden = config_.hidden_size;
  out.vocab_size = config_.vocab_size;
  out.num_rows = 0;
  if (rows == 0) return;

  const std::int64_t half = static_cast<std::int64_t>(inv_freq_.size());
  fill_rotary_table(inv_freq_, ws_.positions, models::grow(ws_.cos, rows * half), models::grow(ws_.sin, rows * half),
                    config_.rope_scaling.attention_factor);
  const Activations residual = grow(ws_.residual, rows * hidden);
  const Activations normed = grow(ws_.normed, rows * hidden);
  select_logit_rows(batch);
  ops_->embed(*embedding_, ws_.ids, residual);
  ops_->rms_norm(residual, *layers_.front().attn_norm, config_.rms_norm_eps, rows, hidden, normed);
  // NOTE: once the last layer has cached every row's keys and values, only the logit rows are
  // read, so its O projection and MLP run on those alone: at a 26-token prompt of a 16-layer
  // model that is ~5.5% of the prefill's matrix work.
  const bool compact = !ops_->reads_every_row();
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const std::int64_t window = config_.window_of_layer(static_cast<std::int64_t>(l));
    for (AttentionSequence& s : sequences_) s.window = window;
    const bool last = l + 1 == layers_.size();
    const std::int64_t out_rows =
        run_layer(layers_[l], static_cast<std::int64_t>(l), rows, sequences_, last && compact);
    // The MLP output joins the residual stream inside the next layer's input norm.
    const Activations proj{ws_.proj.get()};
    if (!last) {
      ops_->add_rms_norm(residual, proj, *layers_[l + 1].attn_norm, config_.rms_norm_eps, rows, hidden, normed);
    } else if (out_rows > 0) {  // the residual may be the kept rows now
      ops_->add({ws_.residual.get()}, proj, out_rows * hidden);
    }
  }
  compute_logits(compact, out);
}

void LlamaModel::select_logit_rows(std::span<const SequenceChunk> batch) {
  ws_.logit_rows.clear();
  std::int64_t first_row = 0;
  for (const SequenceChunk& chunk : batch) {
    const auto n = static_cast<std::int64_t>(chunk.tokens.size());
    for (std::int64_t r = n - logits_rows(chunk); r < n; ++r) ws_.logit_rows.push_back(first_row + r);
    first_row += n;
  }
}

std::int64_t LlamaModel::keep_logit_rows(Activations attn) {
  const std::int64_t q_dim = config_.q_dim(), hidden = config_.hidden_size;
  const auto kept = static_cast<std::int64_t>(ws_.logit_rows.size());
  if (kept == 0) return 0;
  ops_->gather_rows(attn, q_dim, ws_.logit_rows, grow(ws_.kept_attn, kept * q_dim));
  ops_->gather_rows({ws_.residual.get()}, hidden, ws_.logit_rows, grow(ws_.kept_residual, kept * hidden));
  std::swap(ws_.residual, ws_.kept_residual);
  return kept;
}

std::int64_t LlamaModel::run_layer(const Layer& layer, std::int64_t index, std::int64_t rows,
                                   std::span<const AttentionSequence> sequences, bool logit_rows_only) {
  const ir::ModelConfig& c = config_;
  const Activations normed{ws_.normed.get()};
  const Activations q = grow(ws_.q, rows * c.q_dim());
  const Activations k = grow(ws_.k, rows * c.kv_dim());
  const Activations v = grow(ws_.v, rows * c.kv_dim());
  const LinearTarget qkv[] = {
      {layer.wq.get(), layer.bq.get(), q}, {layer.wk.get(), layer.bk.get(), k}, {layer.wv.get(), layer.bv.get(), v}};
  ops_->linear(normed, rows, qkv);
  if (c.qk_norm) {  // each head of q and k normalised on its own: [rows * heads, head_dim]
    ops_->rms_norm(q, *layer.q_norm, c.rms_norm_eps, rows * c.num_heads, c.head_dim, q);
    ops_->rms_norm(k, *layer.k_norm, c.rms_norm_eps, rows * c.num_kv_heads, c.head_dim, k);
  }
  ops_->rope(q, k, rows, c.num_heads, c.num_kv_heads, c.head_dim, {ws_.cos.data(), ws_.sin.data(), c.rotary_dim});
  ops_->store_kv(index, k, v, ws_.slots);
  Activations attn = grow(ws_.attn, rows * c.q_dim());
  ops_->attention(index, q, c.num_heads, sequences, static_cast<float>(1.0 / std::sqrt(double(c.head_dim))), attn);
  if (logit_rows_only) {
    rows = keep_logit_rows(attn);
    if (rows == 0) return 0;
    attn = {ws_.kept_attn.get()};
  }
  const Activations proj = grow(ws_.proj, rows * c.hidden_size);
  const LinearTarget o[] = {{layer.wo.get(), layer.bo.get(), proj}};
  ops_->linear(attn, rows, o);
  ops_->add_rms_norm({ws_.residual.get()}, proj, *layer.mlp_norm, c.rms_norm_eps, rows, c.hidden_size, normed);

  const Activations gate = grow(ws_.gate, rows * c.intermediate_size);
  const Activations up = grow(ws_.up, rows * c.intermediate_size);
  const LinearTarget gate_up[] = {{layer.w_gate.get(), layer.b_gate.get(), gate},
                                  {layer.w_up.get(), layer.b_up.get(), up}};
  ops_->linear(normed, rows, gate_up);
  ops_->silu_mul(gate, up, rows * c.intermediate_size, gate);
  const LinearTarget down[] = {{layer.w_down.get(), layer.b_down.get(), proj}};
  ops_->linear(gate, rows, down);
  return rows;
}

void LlamaModel::compute_logits(bool compacted, StepOutput& out) {
  const std::int64_t hidden = config_.hidden_size;
  const auto num_rows = static_cast<std::int64_t>(ws_.logit_rows.size());
  out.num_rows = num_rows;
  if (num_rows == 0) return;

  // The rows whose logits are wanted, normalised: [num_rows, hidden].
  const Activations residual{ws_.residual.get()};
  const Activations head_in = grow(ws_.head_in, num_rows * hidden);
  if (compacted) {
    ops_->rms_norm(residual, *final_norm_, config_.rms_norm_eps, num_rows, hidden, head_in);
  } else {
    ops_->gather_rows(residual, hidden, ws_.logit_rows, head_in);
    ops_->rms_norm(head_in, *final_norm_, config_.rms_norm_eps, num_rows, hidden, head_in);
  }
  const std::int64_t count = num_rows * config_.vocab_size;
  const Weight& head = head_ ? *head_ : *embedding_;
  const LinearTarget logits[] = {{&head, nullptr, grow(ws_.logits, count)}};
  ops_->linear(head_in, num_rows, logits);
  out.logits.resize(static_cast<std::size_t>(count));
  ops_->read(logits[0].out, count, out.logits.data());
}

}  // namespace kiln::models
