// A GGUF file imported once into kiln's IR under CACHE_DIR. Importing re-lays out every block
// (and re-quantises the types kiln cannot hold), seconds for a 1B model and a second copy of the
// weights in memory; the cached IR is mapped instead, like an export, and its packed weights come
// from the compile cache beside it. The entry is keyed by the file's path, size and modification
// time and by the import options, so a changed file or option imports again.
#pragma once

#include <filesystem>

#include "ir/weight_format.hpp"

namespace kiln::runtime {

// The IR directory holding `gguf` as imported with `requantize`, written first when missing.
std::filesystem::path cached_gguf_import(const std::filesystem::path& gguf, const std::filesystem::path& cache_dir,
                                         WeightScheme requantize);

}  // namespace kiln::runtime
