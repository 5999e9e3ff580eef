#include "genai/model_loader.hpp"

#include <exception>
#include <future>
#include <set>

#include "genai/generation_defaults.hpp"
#include "ir/gguf_model.hpp"
#include "ir/gguf_vocab.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/path_probe.hpp"

namespace kiln::genai {

Tokenizer model_tokenizer(const std::filesystem::path& path) {
  if (!ir::GgufModel::is_gguf_file(path)) {
    if (!path_exists(path / "tokenizer.json") && path_exists(path / "openvino_tokenizer.xml")) {
      fail(ErrorKind::kNotFound,
           "{}: has openvino_tokenizer.xml but no tokenizer.json; kiln tokenizes with the Hugging Face tokenizer "
           "files (tokenizer.json, tokenizer_config.json) that optimum-cli exports beside it: copy them from the "
           "source model",
           path.string());
    }
    return Tokenizer::from_dir(path);
  }
  const ir::GgufTokenizerFiles files = ir::tokenizer_files_from_gguf(ir::GgufFile(path));
  return Tokenizer::from_json(files.tokenizer.dump(), files.tokenizer_config.dump());
}

LoadedModel load_model(const std::filesystem::path& dir, const LoadOptions& options) {
  if (options.context_tokens <= 0 || options.max_sequences <= 0 || options.block_size <= 0) {
    fail("load options: context_tokens, max_sequences and block_size must be positive");
  }
  // The tokenizer (parsing tokenizer.json: ~0.3 s for a 128k vocabulary) and the compile (on a
  // warm cache: mapping and hash-checking the packed weights) are independent, so the tokenizer
  // is built on its own thread meanwhile. Its error still wins over a compile error.
  Stopwatch clock;
  double tokenizer_ms = 0.0;
  std::future<Tokenizer> tokenizer_job = std::async(std::launch::async, [&] {
    Tokenizer t = model_tokenizer(dir);
    tokenizer_ms = clock.elapsed_ms();
    return t;
  });
  std::exception_ptr compile_error;
  runtime::CompiledModel compiled;
  try {
    // An IR directory (model.json), a Hugging Face checkpoint (config.json) or a GGUF file,
    // compiled for the device.
    compiled = runtime::Core().read_and_compile(dir, options.device, options.properties,
                                                {.context_tokens = options.context_tokens,
                                                 .max_sequences = options.max_sequences,
                                                 .num_blocks = options.num_blocks,
                                                 .cache_bytes = options.cache_bytes,
                                                 .block_size = options.block_size,
                                                 .memory_cap_bytes = options.kv_memory_cap_bytes});
  } catch (...) {
    compile_error = std::current_exception();
  }
  const double compile_ms = clock.elapsed_ms();
  Tokenizer tokenizer = tokenizer_job.get();
  if (compile_error) std::rethrow_exception(compile_error);
  init_logging();
  spdlog::debug("load {}: tokenizer {:.1f} ms and compile {:.1f} ms (weights {:.1f} ms) side by side, {:.1f} ms in all",
                dir.string(), tokenizer_ms, compile_ms, compiled.info.compile.seconds * 1e3, clock.elapsed_ms());

  const ir::ModelConfig& config = compiled.config;
  std::set<std::int32_t> eos(config.eos_token_ids.begin(), config.eos_token_ids.end());
  if (eos.empty() && tokenizer.eos_token_id()) eos.insert(*tokenizer.eos_token_id());
  GenerationConfig defaults = generation_config_from_model(compiled.generation_config, eos);
  return {std::move(compiled.weights), std::move(compiled.model), std::move(tokenizer), std::move(defaults),
          std::move(compiled.info)};
}

}  // namespace kiln::genai
