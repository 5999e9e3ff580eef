#include "genai/model_loader.hpp"

#include <set>

#include "util/error.hpp"

namespace kiln::genai {

LoadedModel load_model(const std::filesystem::path& dir, const LoadOptions& options) {
  if (options.context_tokens <= 0 || options.max_sequences <= 0 || options.block_size <= 0) {
    fail("load options: context_tokens, max_sequences and block_size must be positive");
  }
  Tokenizer tokenizer = Tokenizer::from_dir(dir);  // first: a missing tokenizer fails before compiling
  // An IR directory (model.json) or a Hugging Face checkpoint (config.json), compiled for the device.
  runtime::CompiledModel compiled = runtime::Core().read_and_compile(
      dir, options.device, options.properties,
      {.context_tokens = options.context_tokens, .max_sequences = options.max_sequences, .block_size = options.block_size});
  const ir::ModelConfig& config = compiled.config;

  std::set<std::int32_t> eos(config.eos_token_ids.begin(), config.eos_token_ids.end());
  if (eos.empty() && tokenizer.eos_token_id()) eos.insert(*tokenizer.eos_token_id());
  GenerationConfig defaults = GenerationConfig::from_model_defaults(compiled.generation_config, eos);
  return {std::move(compiled.weights), std::move(compiled.model), std::move(tokenizer), std::move(defaults),
          std::move(compiled.info)};
}

}  // namespace kiln::genai
