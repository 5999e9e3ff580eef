#include "genai/pipeline_models.hpp"

#include "genai/chat_session.hpp"
#include "runtime/device_info.hpp"
#include "util/error.hpp"

namespace kiln::genai {
namespace {

LoadedModel load_for(const std::filesystem::path& dir, const std::string& device, const PipelineProperties& p) {
  if (p.kv_cache_sequences < 0)
    fail("PipelineProperties: kv_cache_sequences must be 0 (the pipeline's default) or positive, got {}",
         p.kv_cache_sequences);
  if (p.scheduler.num_kv_blocks < 0)
    fail("SchedulerConfig: num_kv_blocks must be 0 (derived) or positive, got {}", p.scheduler.num_kv_blocks);
  LoadOptions options{.context_tokens = p.context_tokens,
                      .max_sequences = p.kv_cache_sequences,
                      .num_blocks = p.scheduler.num_kv_blocks,
                      .cache_bytes = static_cast<std::uint64_t>(p.scheduler.cache_size) << 30,
                      .block_size = p.kv_block_size,
                      .kv_memory_cap_bytes = runtime::available_memory_bytes() / 2,
                      .device = device};
  for (const auto& [name, value] : p.device_properties) runtime::set_device_property(options.properties, name, value);
  return load_model(dir, options);
}

}  // namespace

PipelineModels::PipelineModels(const std::filesystem::path& model_dir, const std::string& device,
                               const PipelineProperties& properties)
    : main(load_for(model_dir, device, properties)) {
  if (!properties.draft) return;
  draft = load_for(properties.draft->dir, properties.draft->device, properties);
  if (draft->tokenizer.fingerprint() != main.tokenizer.fingerprint()) {
    fail(
        "draft model {}: its tokenizer differs from the main model's ({}); speculative decoding needs both to "
        "give the same token ids",
        properties.draft->dir.string(), model_dir.string());
  }
}

EngineOptions PipelineModels::engine_options(const PipelineProperties& properties) {
  return {.scheduler = properties.scheduler,
          .tokenizer = &main.tokenizer,
          .draft_model = draft ? draft->model.get() : nullptr,
          .adaptive_speculation = properties.adaptive_speculation,
          .max_context_tokens = properties.context_tokens,
          .kv_cache_events = properties.kv_cache_events};
}

GenerationConfig PipelineModels::resolve(const std::optional<GenerationConfig>& given,
                                         const GenerationConfig& fallback) const {
  GenerationConfig c = given.value_or(fallback);
  if (c.eos_token_ids.empty()) c.eos_token_ids = main.generation_defaults.eos_token_ids;
  const bool strategy_set = c.num_assistant_tokens > 0 || c.assistant_confidence_threshold > 0 || c.max_ngram_size > 0;
  if (draft && !strategy_set && c.num_beams == 1 && c.num_return_sequences == 1) c.num_assistant_tokens = 5;
  c.validate();
  return c;
}

std::vector<std::int32_t> PipelineModels::encode_prompt(const std::string& prompt, const GenerationConfig& config) {
  if (config.apply_chat_template && !main.tokenizer.chat_template().empty()) {
    return encode_chat(main.tokenizer, get_chat_template(), ChatHistory({{"user", prompt}}));
  }
  return main.tokenizer.encode(prompt);
}

const ChatTemplate& PipelineModels::get_chat_template() {
  if (!chat_template) chat_template.emplace(main.tokenizer);
  return *chat_template;
}

}  // namespace kiln::genai
