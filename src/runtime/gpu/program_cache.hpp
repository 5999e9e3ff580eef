// Builds OpenCL programs for a device, keeping the built binaries in the compile cache: a GPU's
// first load compiles every kernel (seconds on a real driver), later loads must not. An entry is
// keyed by what decides the binary: the device, its platform and driver versions, the build
// options and the source text. A corrupt or stale entry is rebuilt and replaced, with a warning.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "runtime/gpu/gpu_context.hpp"

namespace kiln::runtime::gpu {

struct ProgramSource {
  std::string_view name;  // for messages: "matmul.cl"
  std::string_view text;
};

struct BuiltProgram {
  cl::Program program;
  bool from_cache = false;  // loaded from a cached binary, not compiled
};

// The file under cache_dir that holds this build's binary.
std::filesystem::path program_cache_path(const GpuContext& gpu, const ProgramSource& source, std::string_view options,
                                         const std::filesystem::path& cache_dir);

// Builds `source` with `options` (OpenCL build options, "-cl-std=CL1.2 -DX=1"). An empty
// cache_dir builds from source every time. A build error names the source and quotes the
// compiler's log.
BuiltProgram build_program(GpuContext& gpu, const ProgramSource& source, std::string_view options,
                           const std::filesystem::path& cache_dir);

}  // namespace kiln::runtime::gpu
