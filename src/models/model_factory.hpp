// Builds the forward pass for a config's model family over a given backend.
#pragma once

#include <memory>

#include "ir/model_config.hpp"
#include "ir/tensor_source.hpp"
#include "models/language_model.hpp"
#include "models/ops.hpp"

namespace kiln::models {

// Throws kiln::Error (unsupported) for a family without a forward pass.
std::unique_ptr<LanguageModel> create_language_model(const ir::ModelConfig& config,
                                                     std::shared_ptr<const ir::TensorSource> source,
                                                     std::unique_ptr<Ops> ops, KvCacheLayout kv_layout);

}  // namespace kiln::models
