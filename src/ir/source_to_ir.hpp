// Any TensorSource written out as kiln's IR: every tensor as it is held (a quantised matrix with
// its scale and zero-point companions), and the config. This is how an imported model (a GGUF
// file) is kept, so that later loads map it like an export instead of converting it again.
#pragma once

#include <filesystem>
#include <string>

#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"

namespace kiln::ir {

// Writes model.json and model.bin into `dir` (an existing, empty directory: callers build it in
// a StagingDirectory so that a failure leaves nothing behind).
void write_ir(const TensorSource& source, const ModelConfig& config, const std::filesystem::path& dir,
              const std::string& producer);

}  // namespace kiln::ir
