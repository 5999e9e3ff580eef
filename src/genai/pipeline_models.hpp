// What every public pipeline loads and decides the same way: the main model and its optional
// draft (same tokenizer, checked), the engine options they imply, how a caller's
// GenerationConfig is completed from the model's defaults, and how a plain prompt becomes ids.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "genai/engine.hpp"
#include "genai/model_loader.hpp"
#include "kiln/llm_pipeline.hpp"
#include "tokenizer/chat_template.hpp"

namespace kiln::genai {

struct PipelineModels {
  LoadedModel main;
  std::optional<LoadedModel> draft;
  std::optional<ChatTemplate> chat_template;  // parsed on first use

  // Throws kiln::Error naming the directory, device or property at fault, or a draft whose
  // tokenizer differs from the main model's.
  PipelineModels(const std::filesystem::path& model_dir, const std::string& device,
                 const PipelineProperties& properties);

  EngineOptions engine_options(const PipelineProperties& properties);
  // The caller's config (or `fallback`) with the model's EOS ids when it names none, and
  // speculation switched on when a draft model is loaded and no strategy was chosen (OpenVINO
  // GenAI's default of 5 candidates). Validated.
  GenerationConfig resolve(const std::optional<GenerationConfig>& given, const GenerationConfig& fallback) const;
  // A plain prompt as ids: rendered as one user message through the chat template when the
  // config asks for it and the tokenizer has one.
  std::vector<std::int32_t> encode_prompt(const std::string& prompt, const GenerationConfig& config);
  const ChatTemplate& get_chat_template();
};

}  // namespace kiln::genai
