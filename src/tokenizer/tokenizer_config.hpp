// tokenizer_config.json, the part transformers adds on top of tokenizer.json: the named special
// tokens, the chat template, clean_up_tokenization_spaces and add_bos_token / add_eos_token.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/added_vocabulary.hpp"
#include "util/json.hpp"

namespace kiln::tok {

struct TokenizerConfig {
  Json json = Json::object();  // the whole file, {} when absent
  std::optional<std::string> bos_token, eos_token, pad_token, unk_token;
  std::string chat_template;
  bool clean_up_tokenization_spaces = false;  // transformers' default since 4.45
  std::optional<bool> add_bos_token, add_eos_token;
  // Every token the file declares (bos, eos, unk, pad, sep, cls, mask, additional special
  // tokens, added_tokens_decoder), which transformers adds when tokenizer.json lacks them.
  std::vector<AddedToken> declared_tokens;
};

// Parses the content of a tokenizer_config.json; `origin` names it in errors.
TokenizerConfig parse_tokenizer_config(Json json, const std::string& origin);

// Reads `config_path` when it exists. A chat_template.jinja file, when given and present,
// replaces the template in the config (newer transformers saves the template there).
TokenizerConfig read_tokenizer_config(const std::filesystem::path& config_path,
                                      const std::filesystem::path& chat_template_path);

}  // namespace kiln::tok
