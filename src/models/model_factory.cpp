#include "models/model_factory.hpp"

#include "models/llama.hpp"
#include "models/tensor_specs.hpp"
#include "util/error.hpp"

namespace kiln::models {

std::unique_ptr<LanguageModel> create_language_model(const ir::ModelConfig& config,
                                                     std::shared_ptr<const ir::TensorSource> source,
                                                     std::unique_ptr<Ops> ops, KvCacheLayout kv_layout) {
  if (is_decoder_family(config.family)) {
    return std::make_unique<LlamaModel>(config, std::move(source), std::move(ops), kv_layout);
  }
  fail(ErrorKind::kUnsupported, "no forward pass for model family '{}' (supported: {})", config.family,
       ir::supported_architectures());
}

}  // namespace kiln::models
