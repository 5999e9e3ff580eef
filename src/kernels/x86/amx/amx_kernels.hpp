// Internal: what the AMX translation unit provides (compiled with AVX-512 and AMX flags): the
// avx512 table with AMX prefill GEMMs. find_matmul_kernels reaches it only after
// isa_supported(Isa::kAmx).
#pragma once

#include "kernels/matmul_table.hpp"

namespace kiln::kernels::amx {

const MatmulTable& matmul_table();  // matmul_amx.cpp, built on first use

}  // namespace kiln::kernels::amx
