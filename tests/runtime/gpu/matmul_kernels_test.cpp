// Oracle: the OpenCL matmul (opencl/matmul.cl) equals its scalar twin
// reference::matmul_f32_activations within f32 rounding relative to Σ|w·x|, and embedding_gather
// equals dequantize_weights exactly, for every weight scheme on odd shapes: an odd `in` (4-bit
// rows starting mid-byte), a ragged last group, per-channel groups, n = 1, 3, 17 activation rows
// (one partial pass, several passes), with and without bias.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "ir/weight_format.hpp"
#include "kernels/opencl/build_options.hpp"
#include "kernels/opencl/opencl_sources.hpp"
#include "kernels/reference/matmul.hpp"
#include "runtime/gpu/program_cache.hpp"
#include "util/half.hpp"

namespace kiln::runtime::gpu {
namespace {

using kiln::testing::download;
using kiln::testing::test_gpu;
using kiln::testing::upload;

struct Shape {
  std::size_t out, in, group;
};

constexpr Shape kShapes[] = {
    {37, 67, 32},   // odd in: 4-bit rows start mid-byte; last group 3 columns
    {5, 64, 64},    // per-channel
    {64, 130, 16},  // each work-item sums several columns; last group 2 columns
};
constexpr std::size_t kRowCounts[] = {1, 3, 17};
constexpr std::size_t kDefaultWorkGroupSize = 64;  // matmul.cl's WG_SIZE without -DWG_SIZE
constexpr float kSentinel = -12345.0f;

std::vector<float> random_values(std::size_t count, unsigned seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(count);
  for (float& e : v) e = dist(rng);
  return v;
}

// Built once per option string for the whole run: PoCL compiles each build in about a second.
const cl::Program& matmul_program(GpuContext& gpu, const std::string& options) {
  static std::map<std::string, cl::Program> programs;
  auto it = programs.find(options);
  if (it == programs.end()) {
    const ProgramSource source{"matmul.cl", kernels::opencl::matmul_source()};
    it = programs.emplace(options, build_program(gpu, source, options, {}).program).first;
  }
  return it->second;
}

// The canonical sections on the device; a section the scheme lacks is a NULL argument.
struct DeviceWeights {
  cl::Buffer data, scales, zero_points;
};

DeviceWeights upload_weights(GpuContext& gpu, const QuantizedMatrix& m) {
  DeviceWeights d;
  d.data = upload(gpu, m.data());
  if (!m.scales().empty()) d.scales = upload(gpu, m.scales());
  if (!m.zero_points().empty()) d.zero_points = upload(gpu, m.zero_points());
  return d;
}

QuantizedMatrix random_weights(WeightScheme scheme, const Shape& s) {
  const std::size_t group = is_float_scheme(scheme) ? s.in : s.group;
  return quantize_weights(random_values(s.out * s.in, 11 + s.in, 0.05f), s.out, s.in, scheme, group, "w");
}

std::string scheme_test_name(const ::testing::TestParamInfo<WeightScheme>& info) {
  return std::string(weight_scheme_name(info.param));
}

class OpenclMatmul : public ::testing::TestWithParam<WeightScheme> {};

// `work_group_size` is the WG_SIZE the build options give (64 unless they say otherwise).
void check_matmul(GpuContext& gpu, WeightScheme scheme, const std::string& options, std::size_t work_group_size,
                  const Shape& s, std::size_t n, bool with_bias) {
  const QuantizedMatrix w = random_weights(scheme, s);
  std::vector<float> x = random_values(n * s.in, 7 + static_cast<unsigned>(n));
  if (n >= 3) std::fill(x.begin() + s.in, x.begin() + 2 * s.in, 0.0f);  // an all-zero row
  const std::vector<float> bias = random_values(s.out, 5);

  std::vector<float> want(n * s.out);
  kernels::reference::matmul_f32_activations(w.view(), x.data(), n, with_bias ? bias.data() : nullptr, want.data(),
                                             s.out, 0, s.out);
  // Σ|w·x| per output, with x as the kernel multiplies it (bf16-rounded for bf16 weights).
  const std::vector<float> wd = dequantize_weights(w.view());
  std::vector<double> magnitude(n * s.out, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t r = 0; r < s.out; ++r) {
      double sum = with_bias ? std::fabs(bias[r]) : 0.0;
      for (std::size_t k = 0; k < s.in; ++k) {
        float xv = x[i * s.in + k];
        if (scheme == WeightScheme::kBf16) xv = bf16_to_f32(f32_to_bf16(xv));
        sum += std::fabs(double(wd[r * s.in + k]) * xv);
      }
      magnitude[i * s.out + r] = sum;
    }
  }

  const DeviceWeights dw = upload_weights(gpu, w);
  const cl::Buffer x_buffer = upload(gpu, x);
  const cl::Buffer bias_buffer = with_bias ? upload(gpu, bias) : cl::Buffer();
  const cl::Buffer y_buffer = upload(gpu, std::vector<float>(n * s.out, kSentinel));
  cl::Kernel kernel(matmul_program(gpu, options), "matmul");
  kernel.setArg(0, dw.data);
  kernel.setArg(1, dw.scales);
  kernel.setArg(2, dw.zero_points);
  kernel.setArg(3, static_cast<cl_uint>(s.out));
  kernel.setArg(4, static_cast<cl_uint>(s.in));
  kernel.setArg(5, static_cast<cl_uint>(w.group_size()));
  kernel.setArg(6, x_buffer);
  kernel.setArg(7, static_cast<cl_uint>(n));
  kernel.setArg(8, bias_buffer);
  kernel.setArg(9, y_buffer);
  gpu.queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(s.out * work_group_size),
                                   cl::NDRange(work_group_size));
  const std::vector<float> y = download<float>(gpu, y_buffer, n * s.out);

  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t r = 0; r < s.out; ++r) {
      const std::size_t at = i * s.out + r;
      EXPECT_LE(std::fabs(double(y[at]) - double(want[at])), 1e-5 * magnitude[at] + 1e-6)
          << "out " << s.out << " in " << s.in << " group " << w.group_size() << " n " << n
          << (with_bias ? " bias" : "") << " row " << i << " col " << r << ": got " << y[at] << ", reference "
          << want[at] << ", magnitude " << magnitude[at];
    }
  }
}

TEST_P(OpenclMatmul, MatchesScalarTwinOnOddShapes) {
  KILN_REQUIRE_GPU(gpu);
  for (const Shape& s : kShapes) {
    for (std::size_t n : kRowCounts) {
      for (bool with_bias : {false, true}) {
        check_matmul(*gpu, GetParam(), kernels::opencl::matmul_build_options(GetParam()), kDefaultWorkGroupSize, s, n,
                     with_bias);
      }
    }
  }
}

TEST_P(OpenclMatmul, EmbeddingGatherEqualsDequantizedRows) {
  KILN_REQUIRE_GPU(gpu);
  const WeightScheme scheme = GetParam();
  for (const Shape& s : {kShapes[0], kShapes[2]}) {
    const QuantizedMatrix table = random_weights(scheme, s);
    const std::vector<float> want = dequantize_weights(table.view());
    // First and last rows, a repeat, odd rows (mid-byte starts for 4-bit with odd in).
    const std::vector<std::int32_t> ids = {0, static_cast<std::int32_t>(s.out - 1), 5, 5, 1, 30, 3};

    const DeviceWeights dw = upload_weights(*gpu, table);
    const cl::Buffer ids_buffer = upload(*gpu, ids);
    const cl::Buffer out_buffer = upload(*gpu, std::vector<float>(ids.size() * s.in, kSentinel));
    cl::Kernel kernel(matmul_program(*gpu, kernels::opencl::matmul_build_options(scheme)), "embedding_gather");
    kernel.setArg(0, dw.data);
    kernel.setArg(1, dw.scales);
    kernel.setArg(2, dw.zero_points);
    kernel.setArg(3, static_cast<cl_uint>(s.in));
    kernel.setArg(4, static_cast<cl_uint>(table.group_size()));
    kernel.setArg(5, ids_buffer);
    kernel.setArg(6, out_buffer);
    gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(s.in, ids.size()));
    const std::vector<float> out = download<float>(*gpu, out_buffer, ids.size() * s.in);

    for (std::size_t t = 0; t < ids.size(); ++t) {
      for (std::size_t col = 0; col < s.in; ++col) {
        ASSERT_EQ(out[t * s.in + col], want[static_cast<std::size_t>(ids[t]) * s.in + col])
            << "out " << s.out << " in " << s.in << " token " << t << " id " << ids[t] << " col " << col;
      }
    }
  }
}

// The smallest work-group (WG_SIZE = MATMUL_ROWS: every work-item writes one row's sum) and one
// wider than `in` (most work-items add nothing); every OpenCL GPU and PoCL allow 256.
TEST(OpenclMatmulWorkGroupSize, BuildOptionSetsIt) {
  KILN_REQUIRE_GPU(gpu);
  for (std::size_t work_group_size : {8, 256}) {
    const std::string options = kernels::opencl::matmul_build_options(WeightScheme::kInt4Asym) +
                                " -DWG_SIZE=" + std::to_string(work_group_size);
    for (std::size_t n : kRowCounts) {
      check_matmul(*gpu, WeightScheme::kInt4Asym, options, work_group_size, kShapes[0], n, true);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllSchemes, OpenclMatmul, ::testing::ValuesIn(kAllWeightSchemes), scheme_test_name);

}  // namespace
}  // namespace kiln::runtime::gpu
