// The oracle backend: plain scalar f32 arithmetic (double accumulation) over weights read
// straight from the mapped checkpoint, and an f32 paged KV cache. Slow and obviously right;
// every faster backend is tested against it.
#pragma once

#include <vector>

#include "models/host_ops.hpp"

namespace kiln::runtime {

class ReferenceOps final : public models::HostOps {
 public:
  std::unique_ptr<models::Weight> load_weight(const ir::TensorView& tensor, models::WeightUse use) override;
  void allocate_kv_cache(const models::KvCacheLayout& layout) override;
  const models::KvCacheLayout& kv_cache_layout() const override { return kv_layout_; }

  void embed(const models::Weight& table, std::span<const std::int32_t> ids, models::Activations out) override;
  void rms_norm(models::Activations x, const models::Weight& gain, double eps, std::int64_t rows, std::int64_t dim,
                models::Activations out) override;
  void add_rms_norm(models::Activations residual, models::Activations x, const models::Weight& gain, double eps,
                    std::int64_t rows, std::int64_t dim, models::Activations out) override;
  void add(models::Activations acc, models::Activations x, std::int64_t count) override;
  void linear(models::Activations x, std::int64_t rows, std::span<const models::LinearTarget> targets) override;
  void rope(models::Activations q, models::Activations k, std::int64_t rows, std::int64_t num_heads,
            std::int64_t num_kv_heads, std::int64_t head_dim, const models::RotaryTable& table) override;
  void silu_mul(models::Activations gate, models::Activations up, std::int64_t count, models::Activations out) override;
  void store_kv(std::int64_t layer, models::Activations k, models::Activations v,
                std::span<const std::int64_t> slots) override;
  void copy_kv_blocks(std::span<const models::KvBlockCopy> copies) override;
  void attention(std::int64_t layer, models::Activations q, std::int64_t num_heads,
                 std::span<const models::AttentionSequence> sequences, float scale, models::Activations out) override;

 private:
  models::KvCacheLayout kv_layout_;
  std::vector<std::vector<float>> keys_;    // per layer: [num_blocks, kv_heads, block_size, head_dim]
  std::vector<std::vector<float>> values_;  // same
  std::vector<float> row_;                  // one dequantised weight row
};

}  // namespace kiln::runtime
