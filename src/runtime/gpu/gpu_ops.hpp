// The GPU backend: models::Ops with weights, KV cache and activations in device memory, run by
// the OpenCL kernels of src/kernels/opencl on one in-order queue. Per step only the host's
// small inputs go to the device (token ids, RoPE tables, KV slots, block tables) and only the
// logits come back. Sampling stays on the host.
#pragma once

#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "models/ops.hpp"
#include "runtime/gpu/gpu_context.hpp"
#include "runtime/gpu/gpu_kv_cache.hpp"

namespace kiln::runtime::gpu {

class GpuOps final : public models::Ops {
 public:
  // Builds the kernels for the device (their binaries kept under `cache_dir` when it is set).
  GpuOps(std::shared_ptr<GpuContext> gpu, std::filesystem::path cache_dir);
  ~GpuOps() override;

  std::unique_ptr<models::Weight> load_weight(const ir::TensorView& tensor, models::WeightUse use) override;
  std::unique_ptr<models::ActivationMemory> allocate_activations(std::int64_t floats) override;
  void gather_rows(models::Activations src, std::int64_t width, std::span<const std::int64_t> rows,
                   models::Activations dst) override;
  void read(models::Activations src, std::int64_t count, float* host) override;
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

  std::uint64_t weight_bytes() const { return weight_bytes_; }
  std::uint64_t kv_cache_bytes() const { return kv_ ? kv_->bytes() : 0; }
  // OpenCL programs compiled from source, and loaded from the compile cache instead.
  std::size_t programs_compiled() const { return programs_compiled_; }
  std::size_t programs_cached() const { return programs_cached_; }

 private:
  struct Kernels;
  // A device buffer holding a copy of small host data (ids, tables), grown as needed. The in-order
  // queue lets every upload reuse it: a write runs after the kernels that read the previous one.
  struct Upload {
    cl::Buffer buffer;
    std::size_t capacity = 0;
  };
  // Enqueues a copy of `bytes` of host data into the slot without waiting: the bytes are first
  // staged in host memory this object owns, kept until the queue has drained (at every read()).
  const cl::Buffer& upload(Upload& slot, const void* data, std::size_t bytes);
  // The queue has run everything enqueued: the staged host copies may be reused.
  void drained();
  cl::Program build(std::string_view name, std::string_view source, const std::string& options);
  void norm(cl::Kernel& kernel, std::int64_t rows);

  std::shared_ptr<GpuContext> gpu_;
  std::filesystem::path cache_dir_;
  std::unique_ptr<Kernels> kernels_;
  std::size_t norm_group_ = 0;
  std::uint64_t weight_bytes_ = 0;
  std::size_t programs_compiled_ = 0, programs_cached_ = 0;
  models::KvCacheLayout kv_layout_;
  std::optional<GpuKvCache> kv_;
  Upload ids_, cos_, sin_, slots_, rows_, copies_, block_tables_, sequences_;
  std::deque<std::vector<std::byte>> staged_;  // host copies of pending uploads (stable addresses)
  std::size_t staged_used_ = 0;
  std::vector<std::int32_t> block_table_host_, sequence_host_;  // concatenated for one upload
};

}  // namespace kiln::runtime::gpu
