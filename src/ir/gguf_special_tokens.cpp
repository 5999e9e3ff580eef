#include "ir/gguf_special_tokens.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "util/error.hpp"

namespace kiln::ir {
namespace {

using Names = std::vector<std::string_view>;

// The token texts llama.cpp recognises, from llama_vocab::impl::load.
const Names kEotNames = {"<|eot_id|>",        "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                         "<|end_of_text|>",   "<EOT>",      "_<EOT>",  "[EOT]",         "<｜end▁of▁sentence｜>",
                         "<end_of_utterance>"};
const Names kEomNames = {"<|eom_id|>"};
const Names kFimPreNames = {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",    "<｜fim▁begin｜>",
                            "<PRE>",          "▁<PRE>",       "<|code_prefix|>", "<|prefix|>"};
const Names kFimSufNames = {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",    "<｜fim▁hole｜>",
                            "<SUF>",          "▁<SUF>",       "<|code_suffix|>", "<|suffix|>"};
const Names kFimMidNames = {"<|fim_middle|>", "<fim-middle>", "<fim_middle>",    "<｜fim▁end｜>",
                            "<MID>",          "▁<MID>",       "<|code_middle|>", "<|middle|>"};
const Names kFimPadNames = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
const Names kFimRepNames = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
const Names kFimSepNames = {"<|file_sep|>"};
const Names kEogNames = {"<|eot_id|>",
                         "<|im_end|>",
                         "<|end|>",
                         "<|return|>",
                         "<|call|>",
                         "<|flush|>",
                         "<|calls|>",
                         "<end_of_turn>",
                         "<|endoftext|>",
                         "</s>",
                         "<|eom_id|>",
                         "<EOT>",
                         "_<EOT>",
                         "[EOT]",
                         "[EOS]",
                         "<|end_of_text|>",
                         "<end_of_utterance>",
                         "<eos>",
                         "<turn|>",
                         "<|tool_response>",
                         "<｜end▁of▁sentence｜>",
                         "[e~["};
const Names kGptOssUserDefinedNames = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

bool is_one_of(const std::string& text, const Names& names) {
  return std::find(names.begin(), names.end(), std::string_view(text)) != names.end();
}

void make_control(GgufTokenType& type) {
  // NOTE: llama.cpp ORs the CONTROL bit into the token's attributes; for the one-bit types of a
  // GGUF that is CONTROL for every purpose kiln has (special-token splitting and decoding).
  type = GgufTokenType::kControl;
}

// Fills `id` from the first token (lowest id) whose text is in `names`, when the metadata left
// it unset, and makes that token CONTROL.
void detect(const std::vector<std::string>& tokens, std::vector<GgufTokenType>& types, const Names& names,
            std::optional<std::int32_t>& id) {
  if (id) return;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!is_one_of(tokens[i], names)) continue;
    id = static_cast<std::int32_t>(i);
    make_control(types[i]);
    return;
  }
}

}  // namespace

GgufSpecialIds read_gguf_special_ids(const GgufFile& file, std::int32_t num_tokens, GgufSpecialDefaults defaults) {
  auto in_range = [&](std::optional<std::int32_t> id) -> std::optional<std::int32_t> {
    return id && *id >= 0 && *id < num_tokens ? id : std::nullopt;
  };
  GgufSpecialIds ids;
  ids.bos = in_range(defaults.bos);
  ids.eos = in_range(defaults.eos);
  ids.unk = in_range(defaults.unk);
  const std::pair<const char*, std::optional<std::int32_t>*> keys[] = {
      {"tokenizer.ggml.bos_token_id", &ids.bos},
      {"tokenizer.ggml.eos_token_id", &ids.eos},
      {"tokenizer.ggml.eot_token_id", &ids.eot},
      {"tokenizer.ggml.eom_token_id", &ids.eom},
      {"tokenizer.ggml.unknown_token_id", &ids.unk},
      {"tokenizer.ggml.padding_token_id", &ids.pad},
      {"tokenizer.ggml.fim_pre_token_id", &ids.fim_pre},
      {"tokenizer.ggml.fim_suf_token_id", &ids.fim_suf},
      {"tokenizer.ggml.fim_mid_token_id", &ids.fim_mid},
      {"tokenizer.ggml.fim_pad_token_id", &ids.fim_pad},
      {"tokenizer.ggml.fim_rep_token_id", &ids.fim_rep},
      {"tokenizer.ggml.fim_sep_token_id", &ids.fim_sep},
      // llama.cpp's older names for the first three FIM ids.
      {"tokenizer.ggml.prefix_token_id", &ids.fim_pre},
      {"tokenizer.ggml.suffix_token_id", &ids.fim_suf},
      {"tokenizer.ggml.middle_token_id", &ids.fim_mid},
  };
  for (const auto& [key, id] : keys) {
    const Json* value = file.find(key);
    if (value == nullptr) continue;
    if (!value->is_number_integer()) {
      fail("{}: {} must be a token id, got {}", file.path().string(), key, value->dump());
    }
    // NOTE: llama.cpp only warns about an id outside the vocabulary and keeps the default; such
    // a file is broken, and a wrong BOS or EOS would go unnoticed, so it is refused here.
    const auto value_id = value->get<std::int64_t>();
    if (value_id < 0 || value_id >= num_tokens) {
      fail("{}: {} is {}, outside the vocabulary of {} tokens", file.path().string(), key, value_id, num_tokens);
    }
    *id = static_cast<std::int32_t>(value_id);
  }
  return ids;
}

std::vector<std::int32_t> apply_llama_cpp_token_types(const std::vector<std::string>& tokens,
                                                      std::vector<GgufTokenType>& types, GgufSpecialIds& ids) {
  detect(tokens, types, kEotNames, ids.eot);
  detect(tokens, types, kEomNames, ids.eom);
  detect(tokens, types, kFimPreNames, ids.fim_pre);
  detect(tokens, types, kFimSufNames, ids.fim_suf);
  detect(tokens, types, kFimMidNames, ids.fim_mid);
  detect(tokens, types, kFimPadNames, ids.fim_pad);
  detect(tokens, types, kFimRepNames, ids.fim_rep);
  detect(tokens, types, kFimSepNames, ids.fim_sep);

  std::set<std::int32_t> eog;
  for (const auto& id : {ids.fim_pad, ids.fim_rep, ids.fim_sep, ids.eos, ids.eot, ids.eom}) {
    if (id) eog.insert(*id);
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (is_one_of(tokens[i], kEogNames)) {
      eog.insert(static_cast<std::int32_t>(i));
      make_control(types[i]);
    }
    if (is_one_of(tokens[i], kGptOssUserDefinedNames)) types[i] = GgufTokenType::kUserDefined;
  }

  // gpt-oss and Solar Open end turns with "<|return|>" / "<|call|>" (or "<|calls|>" /
  // "<|flush|>"): their "<|end|>" only separates messages.
  auto eog_has = [&](std::string_view text) {
    return std::any_of(eog.begin(), eog.end(), [&](std::int32_t id) { return tokens[id] == text; });
  };
  const bool has_call = eog_has("<|call|>") || eog_has("<|calls|>");
  if (eog_has("<|end|>") && has_call && (eog_has("<|return|>") || eog_has("<|flush|>"))) {
    for (auto it = eog.begin(); it != eog.end(); ++it) {
      if (tokens[*it] != "<|end|>") continue;
      types[*it] = GgufTokenType::kUserDefined;
      eog.erase(it);
      break;
    }
  }
  return {eog.begin(), eog.end()};
}

}  // namespace kiln::ir
