#include "runtime/gpu/gpu_weight.hpp"

#include "ir/tensor_convert.hpp"

namespace kiln::runtime::gpu {
namespace {

cl::Buffer upload_bytes(GpuContext& gpu, std::span<const std::uint8_t> bytes, std::uint64_t& total) {
  // OpenCL has no empty buffers; an absent section is a null handle the kernels never read.
  if (bytes.empty()) return {};
  total += bytes.size();
  return cl::Buffer(gpu.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes.size(),
                    const_cast<std::uint8_t*>(bytes.data()));
}

std::span<const std::uint8_t> as_bytes(const std::vector<float>& values) {
  return {reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * sizeof(float)};
}

// Matrices and tables of these kinds go up as stored; every other tensor as f32.
bool kept_as_stored(const ir::TensorView& tensor, models::WeightUse use) {
  return use != models::WeightUse::kVector &&
         (tensor.quantization || tensor.dtype == ElementType::kF16 || tensor.dtype == ElementType::kBf16);
}

}  // namespace

std::unique_ptr<GpuWeight> upload_weight(GpuContext& gpu, const ir::TensorView& tensor, models::WeightUse use) {
  auto w = std::make_unique<GpuWeight>();
  const std::string what = fmt::format("uploading tensor '{}' to {}", tensor.name, gpu.info().name);
  if (use == models::WeightUse::kVector) {
    w->out = tensor.num_elements();
    w->in = w->group_size = 1;
    w->data = gpu_call(what, [&] { return upload_bytes(gpu, as_bytes(ir::to_f32(tensor)), w->bytes); });
    return w;
  }
  if (tensor.shape.size() != 2) {
    fail("tensor '{}': expected a matrix, got shape {}", tensor.name, ir::format_shape(tensor.shape));
  }
  w->out = tensor.shape[0];
  w->in = tensor.shape[1];
  gpu_call(what, [&] {
    if (tensor.quantization) {
      const ir::TensorQuantization& q = *tensor.quantization;
      w->scheme = q.scheme;
      w->group_size = q.group_size;
      w->data = upload_bytes(gpu, tensor.bytes, w->bytes);
      w->scales = upload_bytes(gpu, q.scales, w->bytes);
      w->zero_points = upload_bytes(gpu, q.zero_points, w->bytes);
      return;
    }
    w->group_size = w->in;
    if (kept_as_stored(tensor, use)) {
      w->scheme = tensor.dtype == ElementType::kF16 ? WeightScheme::kF16 : WeightScheme::kBf16;
      w->data = upload_bytes(gpu, tensor.bytes, w->bytes);
    } else {
      w->scheme = WeightScheme::kF32;
      w->data = upload_bytes(gpu, as_bytes(ir::to_f32(tensor)), w->bytes);
    }
  });
  return w;
}

std::uint64_t uploaded_bytes(const ir::TensorView& tensor) {
  const models::WeightUse use = tensor.shape.size() == 1 ? models::WeightUse::kVector : models::WeightUse::kMatrix;
  if (!kept_as_stored(tensor, use)) return static_cast<std::uint64_t>(tensor.num_elements()) * sizeof(float);
  std::uint64_t bytes = tensor.bytes.size();
  if (tensor.quantization) bytes += tensor.quantization->scales.size() + tensor.quantization->zero_points.size();
  return bytes;
}

}  // namespace kiln::runtime::gpu
