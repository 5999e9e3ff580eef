// The compiled CPU backend as calibration's backend factory: the checkpoint's float weights
// repacked for this CPU's ISA, an f32 KV cache, so statistics differ from the scalar reference
// only by summation order. The scalar reference would take hours on a 1B checkpoint.
#pragma once

#include <filesystem>

#include "export/calibration.hpp"

namespace kiln::exporter {

// Packs the checkpoint in `model_dir` when called (so a recipe without calibration never pays
// for it) and returns CPU ops over it, on unpinned threads: the export shares the cores.
BackendFactory cpu_calibration_backend(const std::filesystem::path& model_dir);

}  // namespace kiln::exporter
