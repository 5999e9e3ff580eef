// The GPU device's kernel sources (OpenCL C 1.2, optional extensions behind #ifdef), compiled
// into the library from opencl/<name>.cl and built for a device at run time. Each has a scalar
// twin in reference/ that its tests compare against.
#pragma once

#include <string_view>

namespace kiln::kernels::opencl {

std::string_view elementwise_source();      // rms_norm, add_rms_norm, add, silu_mul, rope, gather_rows
std::string_view matmul_source();           // matmul, embedding_gather; one scheme per build (-DSCHEME_*)
std::string_view paged_attention_source();  // store_kv, copy_kv_blocks, attention (-DKV_F32/F16/U8)

}  // namespace kiln::kernels::opencl
