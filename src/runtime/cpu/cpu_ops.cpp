#include "runtime/cpu/cpu_ops.hpp"

#include <algorithm>

#include "ir/tensor_convert.hpp"
#include "runtime/cpu/memory_region.hpp"
#include "runtime/thread_pool.hpp"
#include "util/error.hpp"

namespace kiln::runtime {
namespace {

// Element-wise work below this many floats runs on the calling thread: waking the pool costs
// more than it saves (about a microsecond per op).
constexpr std::int64_t kParallelFloats = 1 << 15;

}  // namespace

CpuOps::CpuOps(Isa isa, const DeviceProperties& properties, std::shared_ptr<const CompiledWeights> weights,
               std::shared_ptr<ThreadPool> pool, bool release_table_pages)
    : isa_(isa),
      release_table_pages_(release_table_pages),
      properties_(properties),
      weights_(std::move(weights)),
      pool_(std::move(pool)),
      elementwise_(kernels::find_elementwise_kernels(isa)),
      attention_kernels_(kernels::find_attention_kernels(isa)),
      linear_(isa, static_cast<std::size_t>(properties.dynamic_quantization_group_size), *pool_),
      attention_(attention_kernels_, *pool_) {}

CpuOps::~CpuOps() = default;

template <typename Fn>
void CpuOps::for_ranges(std::int64_t count, std::int64_t grain, Fn&& fn) {
  const auto threads = static_cast<std::int64_t>(pool_->num_threads());
  const std::int64_t pieces = std::min(count / std::max<std::int64_t>(grain, 1), threads * 4);
  if (pieces <= 1) {
    fn(std::int64_t{0}, count);
    return;
  }
  pool_->parallel_for(static_cast<std::size_t>(pieces), [&](std::size_t p, std::size_t) {
    fn(count * static_cast<std::int64_t>(p) / pieces, count * static_cast<std::int64_t>(p + 1) / pieces);
  });
}

BoundMatrix CpuOps::bind(const std::string& name) const {
  const std::optional<kernels::PackedWeights> packed = weights_->find(name);
  if (!packed) fail(ErrorKind::kInternal, "tensor '{}': not among the compiled matrices", name);
  const WeightScheme scheme = packed->layout.scheme;
  const auto group = static_cast<std::size_t>(properties_.dynamic_quantization_group_size);
  const kernels::ActivationMode mode =
      group > 0 && is_integer_scheme(scheme) ? kernels::ActivationMode::kInt8 : kernels::ActivationMode::kF32;
  if (mode == kernels::ActivationMode::kInt8) {
    try {
      kernels::check_activation_groups(packed->layout, group, name);
    } catch (const Error& e) {
      fail(e.kind(), "{} (set DYNAMIC_QUANTIZATION_GROUP_SIZE to a size that nests with it, or 0)", e.what());
    }
  }
  return BoundMatrix{name, *packed, kernels::find_matmul_kernels(isa_, scheme, mode), mode};
}

std::unique_ptr<models::Weight> CpuOps::load_weight(const ir::TensorView& tensor, models::WeightUse use) {
  auto w = std::make_unique<CpuWeight>();
  switch (use) {
    case models::WeightUse::kVector: w->values = ir::to_f32(tensor); break;
    case models::WeightUse::kEmbedding:
      if (tensor.shape.size() != 2)
        fail("tensor '{}': expected a matrix, got shape {}", tensor.name, ir::format_shape(tensor.shape));
      w->table = tensor;
      if (weights_->plan().find(tensor.name)) w->matrix = bind(tensor.name);  // tied: also the head
      break;
    case models::WeightUse::kMatrix: w->matrix = bind(tensor.name); break;
  }
  return w;
}

void CpuOps::allocate_kv_cache(const models::KvCacheLayout& layout) {
  kv_.reset();
  kv_.emplace(layout, attention_kernels_.encode);
  kv_layout_ = layout;
}

void CpuOps::embed(const models::Weight& table, std::span<const std::int32_t> ids, models::Activations out_rows) {
  float* out = models::host(out_rows);
  const ir::TensorView& t = *as_cpu(table).table;
  const std::int64_t dim = t.shape[1];
  const std::size_t row_bytes = t.bytes.size() / static_cast<std::size_t>(t.shape[0]);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ir::convert_to_f32(t, ids[i] * dim, dim, out + static_cast<std::int64_t>(i) * dim);
    if (release_table_pages_) {
      release_file_pages_around(t.bytes.subspan(static_cast<std::size_t>(ids[i]) * row_bytes, row_bytes), t.bytes);
    }
  }
}

void CpuOps::rms_norm(models::Activations x_rows, const models::Weight& gain, double eps, std::int64_t rows,
                      std::int64_t dim, models::Activations out_rows) {
  const float* x = models::host(x_rows);
  float* out = models::host(out_rows);
  const float* g = as_cpu(gain).values.data();
  for_ranges(rows, kParallelFloats / dim, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      elementwise_.rms_norm(x + r * dim, g, eps, static_cast<std::size_t>(dim), out + r * dim);
  });
}

void CpuOps::add_rms_norm(models::Activations residual_rows, models::Activations x_rows, const models::Weight& gain,
                          double eps, std::int64_t rows, std::int64_t dim, models::Activations out_rows) {
  float* residual = models::host(residual_rows);
  const float* x = models::host(x_rows);
  float* out = models::host(out_rows);
  const float* g = as_cpu(gain).values.data();
  for_ranges(rows, kParallelFloats / dim, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      elementwise_.add_rms_norm(residual + r * dim, x + r * dim, g, eps, static_cast<std::size_t>(dim), out + r * dim);
    }
  });
}

void CpuOps::add(models::Activations acc_values, models::Activations x_values, std::int64_t count) {
  float* acc = models::host(acc_values);
  const float* x = models::host(x_values);
  for_ranges(count, kParallelFloats, [&](std::int64_t i0, std::int64_t i1) {
    elementwise_.add(acc + i0, x + i0, static_cast<std::size_t>(i1 - i0));
  });
}

void CpuOps::linear(models::Activations x, std::int64_t rows, std::span<const models::LinearTarget> targets) {
  linear_.run(models::host(x), rows, targets);
}

void CpuOps::rope(models::Activations q_rows, models::Activations k_rows, std::int64_t rows, std::int64_t num_heads,
                  std::int64_t num_kv_heads, std::int64_t head_dim, const models::RotaryTable& table) {
  float* q = models::host(q_rows);
  float* k = models::host(k_rows);
  const std::int64_t rotary = table.rotary_dim > 0 ? table.rotary_dim : head_dim;
  const std::int64_t half = rotary / 2;
  const std::int64_t row_floats = (num_heads + num_kv_heads) * head_dim;
  for_ranges(rows, kParallelFloats / row_floats, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* c = table.cos + r * half;
      const float* s = table.sin + r * half;
      if (rotary < head_dim) {  // partial rotary (Phi-3 variants): the kernel sees one head at a time
        for (std::int64_t h = 0; h < num_heads + num_kv_heads; ++h) {
          float* head =
              h < num_heads ? q + (r * num_heads + h) * head_dim : k + (r * num_kv_heads + h - num_heads) * head_dim;
          elementwise_.rope(head, 1, static_cast<std::size_t>(rotary), c, s);
        }
        continue;
      }
      elementwise_.rope(q + r * num_heads * head_dim, static_cast<std::size_t>(num_heads),
                        static_cast<std::size_t>(head_dim), c, s);
      elementwise_.rope(k + r * num_kv_heads * head_dim, static_cast<std::size_t>(num_kv_heads),
                        static_cast<std::size_t>(head_dim), c, s);
    }
  });
}

void CpuOps::silu_mul(models::Activations gate_values, models::Activations up_values, std::int64_t count,
                      models::Activations out_values) {
  const float* gate = models::host(gate_values);
  const float* up = models::host(up_values);
  float* out = models::host(out_values);
  for_ranges(count, kParallelFloats, [&](std::int64_t i0, std::int64_t i1) {
    elementwise_.silu_mul(gate + i0, up + i0, static_cast<std::size_t>(i1 - i0), out + i0);
  });
}

void CpuOps::store_kv(std::int64_t layer, models::Activations k_rows, models::Activations v_rows,
                      std::span<const std::int64_t> slots) {
  const float* k = models::host(k_rows);
  const float* v = models::host(v_rows);
  const std::int64_t row_floats = 2 * kv_layout_.num_kv_heads * kv_layout_.head_dim;
  for_ranges(static_cast<std::int64_t>(slots.size()), kParallelFloats / row_floats,
             [&](std::int64_t r0, std::int64_t r1) {
               kv_->store(layer, k, v, slots, static_cast<std::size_t>(r0), static_cast<std::size_t>(r1));
             });
}

void CpuOps::copy_kv_blocks(std::span<const models::KvBlockCopy> copies) { kv_->copy_blocks(copies); }

void CpuOps::attention(std::int64_t layer, models::Activations q, std::int64_t num_heads,
                       std::span<const models::AttentionSequence> sequences, float scale, models::Activations out) {
  attention_.run(kv_->layer(layer), models::host(q), num_heads, sequences, scale, models::host(out));
}

}  // namespace kiln::runtime
