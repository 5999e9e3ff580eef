#include "export/cpu_calibration_backend.hpp"

#include "ir/hf_checkpoint.hpp"
#include "kernels/cpu_isa.hpp"
#include "models/tensor_specs.hpp"
#include "runtime/cpu/compiled_weights.hpp"
#include "runtime/cpu/cpu_ops.hpp"
#include "runtime/thread_pool.hpp"

namespace kiln::exporter {

BackendFactory cpu_calibration_backend(const std::filesystem::path& model_dir) {
  return [model_dir](const std::shared_ptr<ThreadPool>& shared) -> std::unique_ptr<models::Ops> {
    const ir::HfCheckpoint checkpoint(model_dir);
    models::validate_tensors(checkpoint.config(), checkpoint);
    runtime::DeviceProperties p;
    p.performance_hint = runtime::PerformanceHint::kThroughput;
    p.kv_cache_precision = ElementType::kF32;
    const Isa isa = select_isa();
    std::shared_ptr<ThreadPool> pool =
        shared ? shared
               : std::make_shared<ThreadPool>(ThreadPoolOptions{.num_threads = 0, .pin_threads = false, .spin_us = 20});
    // Packed into fresh memory (no compile cache): the copy lives only as long as calibration.
    std::shared_ptr<const runtime::CompiledWeights> weights = runtime::CompiledWeights::compile(
        runtime::plan_weights(checkpoint.config(), checkpoint, isa), checkpoint, {}, *pool);
    return std::make_unique<runtime::CpuOps>(isa, p, std::move(weights), std::move(pool));
  };
}

}  // namespace kiln::exporter
