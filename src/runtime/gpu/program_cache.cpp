#include "runtime/gpu/program_cache.hpp"

#include <spdlog/spdlog.h>

#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace kiln::runtime::gpu {
namespace {

// The compiler's log, trimmed to what a message can carry.
std::string build_log(const cl::Program& program, const cl::Device& device) {
  std::string log;
  try {
    log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device);
  } catch (const cl::Error&) {
    return "(the driver gave no build log)";
  }
  constexpr std::size_t kMaxLog = 4000;
  if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n...";
  return log;
}

void build(cl::Program& program, const cl::Device& device, const ProgramSource& source, std::string_view options) {
  try {
    program.build(device, std::string(options).c_str());
  } catch (const cl::Error& e) {
    if (e.err() != CL_BUILD_PROGRAM_FAILURE && e.err() != CL_INVALID_BINARY) throw;
    fail("OpenCL program {} does not build for {} with options '{}':\n{}", source.name,
         device.getInfo<CL_DEVICE_NAME>(), options, build_log(program, device));
  }
}

// Loads a cached binary; nullopt (with a warning) when the driver refuses it.
std::optional<cl::Program> load_binary(GpuContext& gpu, const std::filesystem::path& path, const ProgramSource& source,
                                       std::string_view options) {
  const std::string bytes = read_file(path);
  cl::Program::Binaries binaries{std::vector<unsigned char>(bytes.begin(), bytes.end())};
  try {
    cl::Program program(gpu.context(), {gpu.device()}, binaries);
    program.build(gpu.device(), std::string(options).c_str());
    return program;
  } catch (const cl::Error& e) {
    spdlog::warn("compile cache: OpenCL binary {} for {} is unusable ({}); rebuilding it", path.string(), source.name,
                 cl_status_name(e.err()));
    return std::nullopt;
  }
}

}  // namespace

std::filesystem::path program_cache_path(const GpuContext& gpu, const ProgramSource& source, std::string_view options,
                                         const std::filesystem::path& cache_dir) {
  const GpuDeviceInfo& d = gpu.info();
  // Fields separated by a byte no name or option contains, so no two keys run together.
  const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", d.full_name, d.vendor, d.platform,
                                      d.device_version, d.driver_version, options, source.text);
  return cache_dir / "opencl" / (sha256_hex(key) + ".bin");
}

BuiltProgram build_program(GpuContext& gpu, const ProgramSource& source, std::string_view options,
                           const std::filesystem::path& cache_dir) {
  const std::string what = fmt::format("building OpenCL program {}", source.name);
  const std::filesystem::path path =
      cache_dir.empty() ? std::filesystem::path() : program_cache_path(gpu, source, options, cache_dir);
  std::error_code ec;
  if (!path.empty() && std::filesystem::exists(path, ec)) {
    std::optional<cl::Program> cached = gpu_call(what, [&] { return load_binary(gpu, path, source, options); });
    if (cached) return {std::move(*cached), true};
  }
  cl::Program program = gpu_call(what, [&] {
    cl::Program p(gpu.context(), std::string(source.text));
    build(p, gpu.device(), source, options);
    return p;
  });
  if (!path.empty()) {
    try {
      const std::vector<std::vector<unsigned char>> binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (binaries.size() == 1 && !binaries[0].empty()) {
        std::filesystem::create_directories(path.parent_path());
        write_file_atomic(path, {reinterpret_cast<const char*>(binaries[0].data()), binaries[0].size()});
      }
    } catch (const std::exception& e) {  // a cache that cannot be written costs the next load a build
      spdlog::warn("compile cache: cannot keep the OpenCL binary of {} in {}: {}", source.name, path.string(),
                   e.what());
    }
  }
  return {std::move(program), false};
}

}  // namespace kiln::runtime::gpu
