// The oracle backend: plain scalar f32 arithmetic (double accumulation) over weights read
// straight from the mapped checkpoint, and an f32 paged KV cache. Slow and obviously right;
// every faster backend is tested against it.
#pragma once

#include <vector>

#include "models/ops.hpp"

namespace kiln::runtime {

class ReferenceOps final : public models::Ops {
 public:
  std::unique_ptr<models::Weight> load_weight(const ir::TensorView& tensor, models::WeightUse use) override;
  void allocate_kv_cache(const models::KvCacheLayout& layout) override;
  const models::KvCacheLayout& kv_cache_layout() const override { return kv_layout_; }

  void embed(const models::Weight& table, std::span<const std::int32_t> ids, float* out) override;
  void rms_norm(const float* x, const models::Weight& gain, double eps, std::int64_t rows, std::int64_t dim,
                float* out) override;
  void add_rms_norm(float* residual, const float* x, const models::Weight& gain, double eps, std::int64_t rows,
                    std::int64_t dim, float* out) override;
  void add(float* acc, const float* x, std::int64_t count) override;
  void linear(const float* x, std::int64_t rows, std::span<const models::LinearTarget> targets) override;
  void rope(float* q, float* k, std::int64_t rows, std::int64_t num_heads, std::int64_t num_kv_heads,
            std::int64_t head_dim, const models::RotaryTable& table) override;
  void silu_mul(const float* gate, const float* up, std::int64_t count, float* out) override;
  void store_kv(std::int64_t layer, const float* k, const float* v, std::span<const std::int64_t> slots) override;
  void copy_kv_blocks(std::span<const models::KvBlockCopy> copies) override;
  void attention(std::int64_t layer, const float* q, std::int64_t num_heads,
                 std::span<const models::AttentionSequence> sequences, float scale, float* out) override;

 private:
  models::KvCacheLayout kv_layout_;
  std::vector<std::vector<float>> keys_;    // per layer: [num_blocks, kv_heads, block_size, head_dim]
  std::vector<std::vector<float>> values_;  // same
  std::vector<float> row_;                  // one dequantised weight row
};

}  // namespace kiln::runtime
