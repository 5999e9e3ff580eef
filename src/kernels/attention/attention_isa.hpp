// Internal: each ISA's attention kernels, defined in that ISA's translation unit (compiled with
// its flags). find_attention_kernels only calls one after isa_supported() said yes.
#pragma once

#include "kernels/attention/paged_attention.hpp"

namespace kiln::kernels {

AttentionKernels avx2_attention_kernels();
void avx2_attend_rows(const PagedKv& kv, const AttentionRows& rows);  // attention_rows_avx2.cpp
AttentionKernels avx512_attention_kernels();

}  // namespace kiln::kernels
