// The element-wise OpenCL kernels (elementwise.cl) against their scalar twins in
// reference/elementwise on odd shapes: equal within 1e-5 relative (the kernels sum in float, the
// reference in double); add is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gpu_test_util.hpp"
#include "kernels/opencl/build_options.hpp"
#include "kernels/opencl/opencl_sources.hpp"
#include "kernels/reference/elementwise.hpp"

namespace kiln::runtime::gpu {
namespace {

using kiln::testing::download;
using kiln::testing::upload;

constexpr cl_int kNormGroupSize = 128;  // elementwise.cl's NORM_GROUP_SIZE
constexpr double kTolerance = 1e-5;

// Built once per process: PoCL compiles each program at run time.
const cl::Program& elementwise_program(GpuContext& gpu) {
  static const cl::Program program = build_program(gpu, {"elementwise.cl", kernels::opencl::elementwise_source()},
                                                   kernels::opencl::kLanguageOption, {})
                                         .program;
  return program;
}

std::vector<float> random_floats(std::size_t count, std::uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(count);
  for (float& v : x) v = dist(rng);
  return x;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], kTolerance * std::max(1.0f, std::abs(want[i]))) << "at " << i;
}

TEST(ElementwiseKernels, RmsNormMatchesReferenceInPlaceAndOutOfPlace) {
  KILN_REQUIRE_GPU(gpu);
  for (const cl_int dim : {67, 300}) {  // fewer and more elements than work-items
    const cl_int rows = 5;
    const float eps = 1e-6f;
    const std::vector<float> x = random_floats(rows * dim, 1), gain = random_floats(dim, 2);
    std::vector<float> want(x.size());
    kernels::reference::rms_norm(x.data(), gain.data(), eps, rows, dim, want.data());

    cl::Buffer x_buffer = upload(*gpu, x), gain_buffer = upload(*gpu, gain);
    cl::Buffer out_buffer = upload(*gpu, std::vector<float>(x.size()));
    cl::Kernel kernel(elementwise_program(*gpu), "rms_norm");
    for (const cl::Buffer* out : {&out_buffer, &x_buffer}) {  // out of place first: x stays intact
      kernel.setArg(0, x_buffer);
      kernel.setArg(1, gain_buffer);
      kernel.setArg(2, eps);
      kernel.setArg(3, dim);
      kernel.setArg(4, *out);
      gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(kNormGroupSize * rows),
                                        cl::NDRange(kNormGroupSize));
      SCOPED_TRACE(::testing::Message() << "dim " << dim << (out == &x_buffer ? " in place" : ""));
      expect_close(download<float>(*gpu, *out, x.size()), want);
    }
  }
}

TEST(ElementwiseKernels, AddRmsNormUpdatesTheResidualAndNormsIt) {
  KILN_REQUIRE_GPU(gpu);
  const cl_int rows = 5, dim = 67;
  const float eps = 1e-5f;
  std::vector<float> residual = random_floats(rows * dim, 3);
  const std::vector<float> x = random_floats(rows * dim, 4), gain = random_floats(dim, 5);
  cl::Buffer residual_buffer = upload(*gpu, residual), x_buffer = upload(*gpu, x), gain_buffer = upload(*gpu, gain);

  kernels::reference::add(residual.data(), x.data(), rows * dim);
  std::vector<float> want(x.size());
  kernels::reference::rms_norm(residual.data(), gain.data(), eps, rows, dim, want.data());

  // out aliases x, as a layer's norm of its attention output may.
  cl::Kernel kernel(elementwise_program(*gpu), "add_rms_norm");
  kernel.setArg(0, residual_buffer);
  kernel.setArg(1, x_buffer);
  kernel.setArg(2, gain_buffer);
  kernel.setArg(3, eps);
  kernel.setArg(4, dim);
  kernel.setArg(5, x_buffer);
  gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(kNormGroupSize * rows),
                                    cl::NDRange(kNormGroupSize));
  EXPECT_EQ(download<float>(*gpu, residual_buffer, residual.size()), residual);
  expect_close(download<float>(*gpu, x_buffer, x.size()), want);
}

TEST(ElementwiseKernels, AddIsExactPastARoundedUpRange) {
  KILN_REQUIRE_GPU(gpu);
  const cl_long count = 1001;
  std::vector<float> acc = random_floats(count, 6);
  const std::vector<float> x = random_floats(count, 7);
  cl::Buffer acc_buffer = upload(*gpu, acc), x_buffer = upload(*gpu, x);
  kernels::reference::add(acc.data(), x.data(), count);

  cl::Kernel kernel(elementwise_program(*gpu), "add");
  kernel.setArg(0, acc_buffer);
  kernel.setArg(1, x_buffer);
  kernel.setArg(2, count);
  gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(1024), cl::NDRange(64));
  EXPECT_EQ(download<float>(*gpu, acc_buffer, count), acc);
}

TEST(ElementwiseKernels, SiluMulMatchesReferenceInPlace) {
  KILN_REQUIRE_GPU(gpu);
  const cl_long count = 1001;
  const std::vector<float> gate = random_floats(count, 8, -20.0f, 20.0f), up = random_floats(count, 9);
  std::vector<float> want(count);
  kernels::reference::silu_mul(gate.data(), up.data(), count, want.data());

  cl::Buffer gate_buffer = upload(*gpu, gate), up_buffer = upload(*gpu, up);
  cl::Kernel kernel(elementwise_program(*gpu), "silu_mul");
  kernel.setArg(0, gate_buffer);
  kernel.setArg(1, up_buffer);
  kernel.setArg(2, count);
  kernel.setArg(3, gate_buffer);
  gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(1024), cl::NDRange(64));
  expect_close(download<float>(*gpu, gate_buffer, count), want);
}

TEST(ElementwiseKernels, RopeRotatesTheLeadingRotaryDimsOfQAndK) {
  KILN_REQUIRE_GPU(gpu);
  const cl_int rows = 5, num_heads = 4, num_kv_heads = 2;
  for (const auto& [head_dim, rotary_dim] : {std::pair<cl_int, cl_int>{64, 32}, {64, 64}, {80, 80}}) {
    SCOPED_TRACE(::testing::Message() << "head_dim " << head_dim << ", rotary_dim " << rotary_dim);
    const cl_int half = rotary_dim / 2;
    std::vector<float> q = random_floats(rows * num_heads * head_dim, 10);
    std::vector<float> k = random_floats(rows * num_kv_heads * head_dim, 11);
    const std::vector<float> cos = random_floats(rows * half, 12, -1.0f, 1.0f);
    const std::vector<float> sin = random_floats(rows * half, 13, -1.0f, 1.0f);
    cl::Buffer q_buffer = upload(*gpu, q), k_buffer = upload(*gpu, k);
    cl::Buffer cos_buffer = upload(*gpu, cos), sin_buffer = upload(*gpu, sin);

    // As ReferenceOps::rope: each head's leading rotary_dim dims rotate, the rest stay.
    for (cl_int r = 0; r < rows; ++r) {
      for (cl_int h = 0; h < num_heads + num_kv_heads; ++h) {
        float* head =
            h < num_heads ? &q[(r * num_heads + h) * head_dim] : &k[(r * num_kv_heads + h - num_heads) * head_dim];
        kernels::reference::rope_rotate_half(head, 1, 1, rotary_dim, &cos[r * half], &sin[r * half]);
      }
    }

    cl::Kernel kernel(elementwise_program(*gpu), "rope");
    kernel.setArg(0, q_buffer);
    kernel.setArg(1, k_buffer);
    kernel.setArg(2, num_heads);
    kernel.setArg(3, num_kv_heads);
    kernel.setArg(4, head_dim);
    kernel.setArg(5, rotary_dim);
    kernel.setArg(6, cos_buffer);
    kernel.setArg(7, sin_buffer);
    gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(half, num_heads + num_kv_heads, rows));
    expect_close(download<float>(*gpu, q_buffer, q.size()), q);
    expect_close(download<float>(*gpu, k_buffer, k.size()), k);
  }
}

}  // namespace
}  // namespace kiln::runtime::gpu
