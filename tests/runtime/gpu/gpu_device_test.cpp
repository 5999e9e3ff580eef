// GPU device discovery and the OpenCL program cache, on whatever OpenCL device the machine has
// (PoCL's CPU device in CI).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gpu_test_util.hpp"
#include "runtime/gpu/gpu_devices.hpp"
#include "runtime/gpu/program_cache.hpp"
#include "support/test_support.hpp"

namespace kiln::runtime::gpu {
namespace {

using kiln::testing::download;
using kiln::testing::TempDir;
using kiln::testing::test_gpu;
using kiln::testing::upload;

constexpr std::string_view kScaleSource = R"(
__kernel void scale(__global float* x, float factor) { x[get_global_id(0)] *= factor * FACTOR; }
)";

TEST(GpuDeviceName, AcceptsGpuAndGpuDotIndex) {
  EXPECT_TRUE(is_gpu_device_name("GPU"));
  EXPECT_TRUE(is_gpu_device_name("GPU.0"));
  EXPECT_TRUE(is_gpu_device_name("GPU.12"));
  for (const char* bad : {"GPU.", "GPU0", "GPU.x", "GPU.1a", "gpu", "CPU", ""}) EXPECT_FALSE(is_gpu_device_name(bad));
}

TEST(GpuDevices, DescribeTheDeviceTheTestsRunOn) {
  KILN_REQUIRE_GPU(gpu);
  const GpuDeviceInfo& d = gpu->info();
  EXPECT_EQ(d.name, "GPU.0");
  EXPECT_FALSE(d.full_name.empty());
  EXPECT_FALSE(d.driver_version.empty());
  EXPECT_TRUE(d.device_version.starts_with("OpenCL ")) << d.device_version;
  EXPECT_GT(d.global_memory_bytes, 0u);
  EXPECT_GT(d.compute_units, 0);
  EXPECT_GT(d.max_work_group_size, 0u);
  EXPECT_TRUE(std::is_sorted(d.extensions.begin(), d.extensions.end()));
}

TEST(GpuDevices, SelectNamesTheDevicesWhenTheIndexIsPastThem) {
  KILN_REQUIRE_GPU(gpu);
  EXPECT_EQ(select_gpu_device("GPU").info.full_name, gpu->info().full_name);
  EXPECT_EQ(select_gpu_device("GPU.0").info.full_name, gpu->info().full_name);
  EXPECT_KILN_ERROR(select_gpu_device("GPU.99"), "'GPU.99' does not exist", "GPU.0 (");
  EXPECT_KILN_ERROR(select_gpu_device("GPU.x"), "not a GPU device name");
}

TEST(ProgramCache, SecondBuildLoadsTheBinaryAndComputesTheSame) {
  KILN_REQUIRE_GPU(gpu);
  const TempDir cache;
  const ProgramSource source{"scale.cl", kScaleSource};
  const BuiltProgram first = build_program(*gpu, source, "-DFACTOR=2.0f", cache.path());
  EXPECT_FALSE(first.from_cache);
  ASSERT_TRUE(std::filesystem::exists(program_cache_path(*gpu, source, "-DFACTOR=2.0f", cache.path())));
  const BuiltProgram second = build_program(*gpu, source, "-DFACTOR=2.0f", cache.path());
  EXPECT_TRUE(second.from_cache);
  // Other options are another binary.
  EXPECT_FALSE(build_program(*gpu, source, "-DFACTOR=3.0f", cache.path()).from_cache);

  for (const BuiltProgram* built : {&first, &second}) {
    cl::Buffer x = upload(*gpu, std::vector<float>{1, 2, 3});
    cl::Kernel kernel(built->program, "scale");
    kernel.setArg(0, x);
    kernel.setArg(1, 1.5f);
    gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(3));
    EXPECT_EQ(download<float>(*gpu, x, 3), (std::vector<float>{3, 6, 9}));
  }
}

TEST(ProgramCache, CorruptEntryIsRebuiltAndReplaced) {
  KILN_REQUIRE_GPU(gpu);
  const TempDir cache;
  const ProgramSource source{"scale.cl", kScaleSource};
  (void)build_program(*gpu, source, "-DFACTOR=1.0f", cache.path());
  const std::filesystem::path entry = program_cache_path(*gpu, source, "-DFACTOR=1.0f", cache.path());
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << "not a program binary";
  EXPECT_FALSE(build_program(*gpu, source, "-DFACTOR=1.0f", cache.path()).from_cache);
  EXPECT_TRUE(build_program(*gpu, source, "-DFACTOR=1.0f", cache.path()).from_cache);
}

TEST(ProgramCache, BuildErrorNamesTheSourceAndQuotesTheLog) {
  KILN_REQUIRE_GPU(gpu);
  const ProgramSource broken{"broken.cl", "__kernel void k(__global float* x) { x[0] = undeclared_name; }"};
  EXPECT_KILN_ERROR(build_program(*gpu, broken, "", {}), "broken.cl", "undeclared_name");
}

}  // namespace
}  // namespace kiln::runtime::gpu
