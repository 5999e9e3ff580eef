// A weight uploaded to the device once, in the canonical layout of ir/weight_format.hpp (the
// OpenCL kernels read codes, f16 scales and packed zero points as model.bin stores them), or as
// f32 for norm gains and biases.
#pragma once

#include <cstdint>

#include "ir/tensor_view.hpp"
#include "models/ops.hpp"
#include "runtime/gpu/gpu_context.hpp"

namespace kiln::runtime::gpu {

struct GpuWeight final : models::Weight {
  WeightScheme scheme = WeightScheme::kF32;
  std::int64_t out = 0, in = 0;  // [out, in]; a vector is [out] with in == 1
  std::int64_t group_size = 0;
  cl::Buffer data;          // codes or values
  cl::Buffer scales;        // f16 [out, groups]; quantised schemes only
  cl::Buffer zero_points;   // asym schemes only
  std::uint64_t bytes = 0;  // device memory held
};

// Uploads `tensor` for `use`: matrices and embedding tables keep their scheme (f32, f16 and bf16
// tensors as those float schemes; any other dtype converted to f32); vectors become f32.
std::unique_ptr<GpuWeight> upload_weight(GpuContext& gpu, const ir::TensorView& tensor, models::WeightUse use);

// Device bytes upload_weight gives `tensor` (a 1-D tensor is a vector): what a load is checked
// against before anything is uploaded.
std::uint64_t uploaded_bytes(const ir::TensorView& tensor);

inline const GpuWeight& as_gpu(const models::Weight& w) { return static_cast<const GpuWeight&>(w); }

}  // namespace kiln::runtime::gpu
