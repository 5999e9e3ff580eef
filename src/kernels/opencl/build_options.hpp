// The build options that pick a variant of an OpenCL program (opencl_sources.hpp), in one place
// for the backend and the kernel tests.
#pragma once

#include <string>

#include "ir/weight_format.hpp"
#include "util/element_type.hpp"

namespace kiln::kernels::opencl {

// "-cl-std=CL1.2 -DSCHEME_INT4_ASYM" for int4_asym; nf4 also gets kNf4Levels (-DNF4_LEVELS=...),
// so the kernel's table is the IR's own.
std::string matmul_build_options(WeightScheme scheme);

// "-cl-std=CL1.2 -DKV_F16" for an f16 cache: f32, f16 and u8 have kernels; another precision fails.
std::string attention_build_options(ElementType precision);

// The options every other program is built with: OpenCL C 1.2, the language of the kernels.
inline constexpr const char* kLanguageOption = "-cl-std=CL1.2";

}  // namespace kiln::kernels::opencl
