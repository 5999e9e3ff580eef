#include "runtime/gpu/gpu_ops.hpp"

#include <map>

#include "kernels/opencl/build_options.hpp"
#include "kernels/opencl/opencl_sources.hpp"
#include "runtime/gpu/gpu_weight.hpp"
#include "runtime/gpu/program_cache.hpp"

namespace kiln::runtime::gpu {
namespace {

namespace cl_sources = kernels::opencl;

constexpr std::size_t kMatmulGroup = 64;     // WG_SIZE of matmul.cl
constexpr std::size_t kAttentionGroup = 64;  // ATTENTION_GROUP_SIZE of paged_attention.cl
constexpr std::size_t kElementGroup = 64;    // element-wise launches round up to this
constexpr std::size_t kMaxStaged = 4096;     // host copies of uploads kept before draining the queue

class DeviceActivations final : public models::ActivationMemory {
 public:
  DeviceActivations(GpuContext& gpu, std::int64_t floats)
      : floats_(floats),
        buffer_(gpu.context(), CL_MEM_READ_WRITE, static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)) * 4) {}
  std::int64_t size() const override { return floats_; }
  const cl::Buffer& buffer() const { return buffer_; }

 private:
  std::int64_t floats_;
  cl::Buffer buffer_;
};

const cl::Buffer& cl_buffer(models::Activations a) { return static_cast<DeviceActivations*>(a.buffer)->buffer(); }

// The kernels take sizes as 32-bit OpenCL integers (every size a model has fits).
cl_int i32(std::int64_t value) { return static_cast<cl_int>(value); }
cl_uint u32(std::int64_t value) { return static_cast<cl_uint>(value); }

// Sets a kernel's arguments in order (cl::Kernel keeps them, so every launch sets all of them).
template <typename... Args>
void set_args(cl::Kernel& kernel, const Args&... args) {
  cl_uint index = 0;
  (kernel.setArg(index++, args), ...);
}

std::size_t round_up(std::int64_t count, std::size_t multiple) {
  return (static_cast<std::size_t>(count) + multiple - 1) / multiple * multiple;
}

// The largest power of two up to `limit` and 128: the norms' work-group (NORM_GROUP_SIZE).
std::size_t norm_group_size(std::size_t limit) {
  std::size_t size = 1;
  while (size * 2 <= std::min<std::size_t>(limit, 128)) size *= 2;
  return size;
}

}  // namespace

// The built programs and their kernels. cl::Kernel holds its arguments, so each op sets all of
// its kernel's arguments before every launch.
struct GpuOps::Kernels {
  struct Matmul {
    cl::Kernel matmul, gather;
  };
  cl::Kernel rms_norm, add_rms_norm, add, silu_mul, rope, gather_rows;
  cl::Kernel store_kv, copy_kv_blocks, attention;
  std::map<WeightScheme, Matmul> matmul;  // built for the schemes the model has
};

GpuOps::GpuOps(std::shared_ptr<GpuContext> gpu, std::filesystem::path cache_dir)
    : gpu_(std::move(gpu)), cache_dir_(std::move(cache_dir)), kernels_(std::make_unique<Kernels>()) {
  norm_group_ = norm_group_size(gpu_->info().max_work_group_size);
  const cl::Program elementwise =
      build("elementwise.cl", cl_sources::elementwise_source(),
            fmt::format("{} -DNORM_GROUP_SIZE={}", cl_sources::kLanguageOption, norm_group_));
  gpu_call("creating the element-wise kernels", [&] {
    kernels_->rms_norm = cl::Kernel(elementwise, "rms_norm");
    kernels_->add_rms_norm = cl::Kernel(elementwise, "add_rms_norm");
    kernels_->add = cl::Kernel(elementwise, "add");
    kernels_->silu_mul = cl::Kernel(elementwise, "silu_mul");
    kernels_->rope = cl::Kernel(elementwise, "rope");
    kernels_->gather_rows = cl::Kernel(elementwise, "gather_rows");
  });
}

GpuOps::~GpuOps() = default;

cl::Program GpuOps::build(std::string_view name, std::string_view source, const std::string& options) {
  BuiltProgram built = build_program(*gpu_, {name, source}, options, cache_dir_);
  ++(built.from_cache ? programs_cached_ : programs_compiled_);
  return std::move(built.program);
}

const cl::Buffer& GpuOps::upload(Upload& slot, const void* data, std::size_t bytes) {
  if (slot.capacity < bytes) {
    slot.capacity = std::max(bytes, 2 * slot.capacity);
    slot.buffer = cl::Buffer(gpu_->context(), CL_MEM_READ_ONLY, slot.capacity);
  }
  if (bytes == 0) return slot.buffer;
  // NOTE: a blocking write would wait for the whole queue, stalling the host once per op; the
  // model's step inputs change before the queue drains, hence the staged copy. A long run of
  // steps without a read drains here now and then, so the staging stays small.
  if (staged_used_ == kMaxStaged) {
    gpu_->queue().finish();
    drained();
  }
  if (staged_used_ == staged_.size()) staged_.emplace_back();
  std::vector<std::byte>& copy = staged_[staged_used_++];
  const auto* first = static_cast<const std::byte*>(data);
  copy.assign(first, first + bytes);
  gpu_->queue().enqueueWriteBuffer(slot.buffer, CL_FALSE, 0, bytes, copy.data());
  return slot.buffer;
}

void GpuOps::drained() { staged_used_ = 0; }

std::unique_ptr<models::Weight> GpuOps::load_weight(const ir::TensorView& tensor, models::WeightUse use) {
  std::unique_ptr<GpuWeight> w = upload_weight(*gpu_, tensor, use);
  weight_bytes_ += w->bytes;
  if (use != models::WeightUse::kVector && !kernels_->matmul.contains(w->scheme)) {
    const cl::Program program =
        build("matmul.cl", cl_sources::matmul_source(),
              fmt::format("{} -DWG_SIZE={}", cl_sources::matmul_build_options(w->scheme), kMatmulGroup));
    gpu_call("creating the matmul kernels", [&] {
      kernels_->matmul[w->scheme] = {cl::Kernel(program, "matmul"), cl::Kernel(program, "embedding_gather")};
    });
  }
  return w;
}

std::unique_ptr<models::ActivationMemory> GpuOps::allocate_activations(std::int64_t floats) {
  return gpu_call("allocating activations", [&] { return std::make_unique<DeviceActivations>(*gpu_, floats); });
}

void GpuOps::gather_rows(models::Activations src, std::int64_t width, std::span<const std::int64_t> rows,
                         models::Activations dst) {
  if (rows.empty()) return;
  gpu_call("gather_rows", [&] {
    cl::Kernel& k = kernels_->gather_rows;
    set_args(k, cl_buffer(src), upload(rows_, rows.data(), rows.size_bytes()), i32(width), cl_buffer(dst));
    gpu_->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(static_cast<std::size_t>(width), rows.size()));
  });
}

void GpuOps::read(models::Activations src, std::int64_t count, float* host) {
  if (count <= 0) return;
  gpu_call("reading the logits", [&] {
    gpu_->queue().enqueueReadBuffer(cl_buffer(src), CL_TRUE, 0, static_cast<std::size_t>(count) * 4, host);
  });
  drained();  // a blocking read on an in-order queue returns after everything before it
}

void GpuOps::allocate_kv_cache(const models::KvCacheLayout& layout) {
  // The options first: a precision without kernels fails before any memory is taken.
  const std::string options = fmt::format("{} -DATTENTION_GROUP_SIZE={}",
                                          cl_sources::attention_build_options(layout.precision), kAttentionGroup);
  kv_.reset();
  kv_.emplace(*gpu_, layout);
  kv_layout_ = layout;
  const cl::Program program = build("paged_attention.cl", cl_sources::paged_attention_source(), options);
  gpu_call("creating the attention kernels", [&] {
    kernels_->store_kv = cl::Kernel(program, "store_kv");
    kernels_->copy_kv_blocks = cl::Kernel(program, "copy_kv_blocks");
    kernels_->attention = cl::Kernel(program, "attention");
  });
}

void GpuOps::embed(const models::Weight& table, std::span<const std::int32_t> ids, models::Activations out) {
  if (ids.empty()) return;
  const GpuWeight& t = as_gpu(table);
  gpu_call("embed", [&] {
    cl::Kernel& k = kernels_->matmul.at(t.scheme).gather;
    set_args(k, t.data, t.scales, t.zero_points, u32(t.in), u32(t.group_size),
             upload(ids_, ids.data(), ids.size_bytes()), cl_buffer(out));
    gpu_->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(static_cast<std::size_t>(t.in), ids.size()));
  });
}

void GpuOps::norm(cl::Kernel& kernel, std::int64_t rows) {
  gpu_->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(norm_group_ * static_cast<std::size_t>(rows)),
                                     cl::NDRange(norm_group_));
}

void GpuOps::rms_norm(models::Activations x, const models::Weight& gain, double eps, std::int64_t rows,
                      std::int64_t dim, models::Activations out) {
  if (rows == 0) return;
  gpu_call("rms_norm", [&] {
    cl::Kernel& k = kernels_->rms_norm;
    set_args(k, cl_buffer(x), as_gpu(gain).data, static_cast<float>(eps), i32(dim), cl_buffer(out));
    norm(k, rows);
  });
}

void GpuOps::add_rms_norm(models::Activations residual, models::Activations x, const models::Weight& gain, double eps,
                          std::int64_t rows, std::int64_t dim, models::Activations out) {
  if (rows == 0) return;
  gpu_call("add_rms_norm", [&] {
    cl::Kernel& k = kernels_->add_rms_norm;
    set_args(k, cl_buffer(residual), cl_buffer(x), as_gpu(gain).data, static_cast<float>(eps), i32(dim),
             cl_buffer(out));
    norm(k, rows);
  });
}

void GpuOps::add(models::Activations acc, models::Activations x, std::int64_t count) {
  if (count == 0) return;
  gpu_call("add", [&] {
    cl::Kernel& k = kernels_->add;
    set_args(k, cl_buffer(acc), cl_buffer(x), static_cast<cl_long>(count));
    gpu_->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(round_up(count, kElementGroup)));
  });
}

void GpuOps::linear(models::Activations x, std::int64_t rows, std::span<const models::LinearTarget> targets) {
  if (rows == 0) return;
  for (const models::LinearTarget& target : targets) {
    const GpuWeight& w = as_gpu(*target.weight);
    gpu_call("linear", [&] {
      cl::Kernel& k = kernels_->matmul.at(w.scheme).matmul;
      set_args(k, w.data, w.scales, w.zero_points, u32(w.out), u32(w.in), u32(w.group_size), cl_buffer(x), u32(rows),
               target.bias ? as_gpu(*target.bias).data : cl::Buffer(), cl_buffer(target.out));
      gpu_->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(static_cast<std::size_t>(w.out) * kMatmulGroup),
                                         cl::NDRange(kMatmulGroup));
    });
  }
}

void GpuOps::rope(models::Activations q, models::Activations k, std::int64_t rows, std::int64_t num_heads,
                  std::int64_t num_kv_heads, std::int64_t head_dim, const models::RotaryTable& table) {
  if (rows == 0) return;
  const std::int64_t rotary = table.rotary_dim > 0 ? table.rotary_dim : head_dim;
  const auto table_bytes = static_cast<std::size_t>(rows * (rotary / 2)) * sizeof(float);
  gpu_call("rope", [&] {
    cl::Kernel& kernel = kernels_->rope;
    set_args(kernel, cl_buffer(q), cl_buffer(k), i32(num_heads), i32(num_kv_heads), i32(head_dim), i32(rotary),
             upload(cos_, table.cos, table_bytes), upload(sin_, table.sin, table_bytes));
    gpu_->queue().enqueueNDRangeKernel(
        kernel, cl::NullRange,
        cl::NDRange(static_cast<std::size_t>(rotary / 2), static_cast<std::size_t>(num_heads + num_kv_heads),
                    static_cast<std::size_t>(rows)));
  });
}

void GpuOps::silu_mul(models::Activations gate, models::Activations up, std::int64_t count, models::Activations out) {
  if (count == 0) return;
  gpu_call("silu_mul", [&] {
    cl::Kernel& k = kernels_->silu_mul;
    set_args(k, cl_buffer(gate), cl_buffer(up), static_cast<cl_long>(count), cl_buffer(out));
    gpu_->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(round_up(count, kElementGroup)));
  });
}

void GpuOps::store_kv(std::int64_t layer, models::Activations k, models::Activations v,
                      std::span<const std::int64_t> slots) {
  if (slots.empty()) return;
  const models::KvCacheLayout& l = kv_layout_;
  const std::int64_t units = l.precision == ElementType::kU8 ? kv_->groups() : l.head_dim;
  GpuKvLayer& cache = kv_->layer(layer);
  gpu_call("store_kv", [&] {
    cl::Kernel& kernel = kernels_->store_kv;
    set_args(kernel, cl_buffer(k), cl_buffer(v), upload(slots_, slots.data(), slots.size_bytes()), i32(l.num_kv_heads),
             i32(l.head_dim), i32(l.block_size), i32(l.u8_group_size), i32(kv_->groups()), cache.keys, cache.values,
             cache.key_params, cache.value_params);
    gpu_->queue().enqueueNDRangeKernel(
        kernel, cl::NullRange,
        cl::NDRange(static_cast<std::size_t>(units), static_cast<std::size_t>(l.num_kv_heads), slots.size()));
  });
}

void GpuOps::copy_kv_blocks(std::span<const models::KvBlockCopy> copies) {
  if (copies.empty()) return;
  const models::KvCacheLayout& l = kv_layout_;
  for (const models::KvBlockCopy& c : copies) {
    if (c.src < 0 || c.src >= l.num_blocks || c.dst < 0 || c.dst >= l.num_blocks) {
      fail(ErrorKind::kInternal, "KV block copy {} -> {} is outside the cache's {} blocks", c.src, c.dst, l.num_blocks);
    }
  }
  static_assert(sizeof(models::KvBlockCopy) == 2 * sizeof(cl_long), "copies upload as (src, dst) int64 pairs");
  const std::int64_t block_elements = l.num_kv_heads * l.block_size * l.head_dim;
  const std::int64_t block_params = l.num_kv_heads * l.block_size * kv_->groups() * 2;
  gpu_call("copy_kv_blocks", [&] {
    const cl::Buffer& pairs = upload(copies_, copies.data(), copies.size_bytes());
    cl::Kernel& k = kernels_->copy_kv_blocks;
    for (std::int64_t layer = 0; layer < l.num_layers; ++layer) {
      GpuKvLayer& cache = kv_->layer(layer);
      set_args(k, cache.keys, cache.values, cache.key_params, cache.value_params, pairs, i32(copies.size()),
               static_cast<cl_long>(block_elements), static_cast<cl_long>(block_params));
      gpu_->queue().enqueueNDRangeKernel(k, cl::NullRange,
                                         cl::NDRange(round_up(std::max(block_elements, block_params), kElementGroup)));
    }
  });
}

void GpuOps::attention(std::int64_t layer, models::Activations q, std::int64_t num_heads,
                       std::span<const models::AttentionSequence> sequences, float scale, models::Activations out) {
  // The sequences as the kernel reads them: [n, 5] (row_begin, num_rows, num_cached, table_begin,
  // window) and every block table, concatenated.
  block_table_host_.clear();
  sequence_host_.clear();
  std::int64_t rows = 0;
  for (const models::AttentionSequence& s : sequences) {
    sequence_host_.insert(sequence_host_.end(),
                          {static_cast<std::int32_t>(s.row_begin), static_cast<std::int32_t>(s.num_rows),
                           static_cast<std::int32_t>(s.num_cached), static_cast<std::int32_t>(block_table_host_.size()),
                           static_cast<std::int32_t>(s.window)});
    block_table_host_.insert(block_table_host_.end(), s.block_table.begin(), s.block_table.end());
    rows = std::max(rows, s.row_begin + s.num_rows);
  }
  if (rows == 0) return;
  const models::KvCacheLayout& l = kv_layout_;
  GpuKvLayer& cache = kv_->layer(layer);
  gpu_call("attention", [&] {
    cl::Kernel& k = kernels_->attention;
    set_args(k, cl_buffer(q), cache.keys, cache.values, cache.key_params, cache.value_params,
             upload(block_tables_, block_table_host_.data(), block_table_host_.size() * sizeof(std::int32_t)),
             upload(sequences_, sequence_host_.data(), sequence_host_.size() * sizeof(std::int32_t)),
             i32(sequences.size()), i32(num_heads), i32(l.num_kv_heads), i32(l.head_dim), i32(l.block_size),
             i32(l.u8_group_size), i32(kv_->groups()), scale, cl_buffer(out));
    gpu_->queue().enqueueNDRangeKernel(
        k, cl::NullRange,
        cl::NDRange(kAttentionGroup, static_cast<std::size_t>(num_heads), static_cast<std::size_t>(rows)),
        cl::NDRange(kAttentionGroup, 1, 1));
  });
}

}  // namespace kiln::runtime::gpu
