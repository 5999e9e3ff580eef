#include "genai/model_loader.hpp"

#include <algorithm>

#include "ir/hf_checkpoint.hpp"
#include "models/model_factory.hpp"
#include "models/reference_ops.hpp"
#include "util/error.hpp"

namespace kiln::genai {

LoadedModel load_model(const std::filesystem::path& dir, const LoadOptions& options) {
  if (options.context_tokens <= 0 || options.max_sequences <= 0 || options.block_size <= 0) {
    fail("load options: context_tokens, max_sequences and block_size must be positive");
  }
  auto checkpoint = std::make_shared<ir::HfCheckpoint>(dir);
  const ir::ModelConfig& config = checkpoint->config();
  Tokenizer tokenizer = Tokenizer::from_dir(dir);

  models::KvCacheLayout kv;
  kv.block_size = options.block_size;
  const std::int64_t context = std::min(options.context_tokens, config.max_position_embeddings);
  kv.num_blocks = options.max_sequences * ((context + kv.block_size - 1) / kv.block_size);
  auto model = models::create_language_model(config, checkpoint, std::make_unique<models::ReferenceOps>(), kv);

  std::set<std::int32_t> eos(config.eos_token_ids.begin(), config.eos_token_ids.end());
  if (eos.empty() && tokenizer.eos_token_id()) eos.insert(*tokenizer.eos_token_id());
  GenerationConfig defaults = GenerationConfig::from_model_defaults(checkpoint->generation_config(), eos);
  return {std::move(checkpoint), std::move(model), std::move(tokenizer), std::move(defaults)};
}

}  // namespace kiln::genai
