#include "genai/model_loader.hpp"

#include <algorithm>

#include "ir/hf_checkpoint.hpp"
#include "ir/ir_model.hpp"
#include "models/model_factory.hpp"
#include "models/reference_ops.hpp"
#include "util/error.hpp"

namespace kiln::genai {

LoadedModel load_model(const std::filesystem::path& dir, const LoadOptions& options) {
  if (options.context_tokens <= 0 || options.max_sequences <= 0 || options.block_size <= 0) {
    fail("load options: context_tokens, max_sequences and block_size must be positive");
  }
  // An IR directory (model.json) or a Hugging Face checkpoint (config.json): same tensors by name.
  std::shared_ptr<const ir::TensorSource> weights;
  ir::ModelConfig config;
  Json generation_config;
  if (ir::IrModel::is_ir_dir(dir)) {
    auto ir_model = std::make_shared<ir::IrModel>(dir);
    config = ir_model->config();
    generation_config = ir_model->generation_config();
    weights = std::move(ir_model);
  } else {
    auto checkpoint = std::make_shared<ir::HfCheckpoint>(dir);
    config = checkpoint->config();
    generation_config = checkpoint->generation_config();
    weights = std::move(checkpoint);
  }
  Tokenizer tokenizer = Tokenizer::from_dir(dir);

  models::KvCacheLayout kv;
  kv.block_size = options.block_size;
  const std::int64_t context = std::min(options.context_tokens, config.max_position_embeddings);
  kv.num_blocks = options.max_sequences * ((context + kv.block_size - 1) / kv.block_size);
  auto model = models::create_language_model(config, weights, std::make_unique<models::ReferenceOps>(), kv);

  std::set<std::int32_t> eos(config.eos_token_ids.begin(), config.eos_token_ids.end());
  if (eos.empty() && tokenizer.eos_token_id()) eos.insert(*tokenizer.eos_token_id());
  GenerationConfig defaults = GenerationConfig::from_model_defaults(generation_config, eos);
  return {std::move(weights), std::move(model), std::move(tokenizer), std::move(defaults)};
}

}  // namespace kiln::genai
