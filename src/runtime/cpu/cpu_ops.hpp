// The compiled CPU backend: models::Ops over weights repacked for the selected ISA (shared with
// the compile cache), the ISA's element-wise, matmul and paged-attention kernels, and a
// persistent thread pool that splits rows, weight tiles and attention tasks. Buffers grow to
// the largest step seen and are reused, so a decode step allocates nothing.
#pragma once

#include <memory>
#include <optional>

#include "ir/model_config.hpp"
#include "kernels/elementwise.hpp"
#include "models/host_ops.hpp"
#include "runtime/cpu/attention_runner.hpp"
#include "runtime/cpu/compiled_weights.hpp"
#include "runtime/cpu/linear_runner.hpp"
#include "runtime/cpu/paged_kv_store.hpp"
#include "runtime/properties.hpp"

namespace kiln::runtime {

class CpuOps final : public models::HostOps {
 public:
  // `weights` holds every matrix the forward pass multiplies by (plan_weights); the pool runs
  // every op. Both are shared with whoever compiled them and must outlive nothing else.
  // `release_table_pages`: embedding tables lie in a read-only file mapping (the model file), so
  // the pages a lookup maps are handed back after it (the page cache keeps them): RSS then holds
  // the packed weights and not a growing part of model.bin (+64 KiB to 2 MiB per distinct token).
  CpuOps(Isa isa, const DeviceProperties& properties, std::shared_ptr<const CompiledWeights> weights,
         std::shared_ptr<ThreadPool> pool, bool release_table_pages = false);
  ~CpuOps() override;

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

  Isa isa() const { return isa_; }
  std::size_t kv_cache_bytes() const { return kv_ ? kv_->bytes() : 0; }

 private:
  BoundMatrix bind(const std::string& name) const;
  // Runs fn(begin, end) over [0, count) in pieces of at least `grain`, on the pool when worth it.
  template <typename Fn>
  void for_ranges(std::int64_t count, std::int64_t grain, Fn&& fn);

  Isa isa_;
  bool release_table_pages_;
  DeviceProperties properties_;
  std::shared_ptr<const CompiledWeights> weights_;
  std::shared_ptr<ThreadPool> pool_;
  kernels::ElementwiseKernels elementwise_;
  kernels::AttentionKernels attention_kernels_;
  LinearRunner linear_;
  AttentionRunner attention_;
  models::KvCacheLayout kv_layout_;
  std::optional<PagedKvStore> kv_;
};

}  // namespace kiln::runtime
