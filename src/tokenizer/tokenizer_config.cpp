// Parsing tokenizer_config.json: token strings may be plain strings or serialized AddedToken
// objects ({"content": ..., "lstrip": ...}); the chat template a string or a list of named ones.
#include "tokenizer/tokenizer_config.hpp"

#include "util/file_io.hpp"
#include "util/path_probe.hpp"

namespace kiln::tok {
namespace {

// A token field: "<s>", {"content": "<s>", ...} or null.
std::optional<AddedToken> parse_token(const Json& value, const std::string& origin) {
  if (value.is_null()) return std::nullopt;
  AddedToken token;
  token.special = true;
  token.normalized = false;
  if (value.is_string()) {
    token.content = value.get<std::string>();
    return token;
  }
  const JsonFields fields(value, origin);
  token.content = fields.get<std::string>("content");
  token.single_word = fields.get_or<bool>("single_word", false);
  token.lstrip = fields.get_or<bool>("lstrip", false);
  token.rstrip = fields.get_or<bool>("rstrip", false);
  token.normalized = fields.get_or<bool>("normalized", false);
  token.special = fields.get_or<bool>("special", true);
  return token;
}

std::string parse_chat_template(const Json& value, const std::string& origin) {
  if (value.is_null()) return {};
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {  // [{"name": "default", "template": "..."}, {"name": "tool_use", ...}]
    for (const Json& entry : value) {
      if (entry.is_object() && entry.value("name", std::string()) == "default" && entry.contains("template") &&
          entry["template"].is_string()) {
        return entry["template"].get<std::string>();
      }
    }
    return {};
  }
  fail("{}: field 'chat_template' must be a string or a list of named templates, got {}", origin, value.type_name());
}

}  // namespace

namespace {

TokenizerConfig parse_checked(Json json, const std::string& origin) {
  TokenizerConfig config;
  config.json = std::move(json);
  const JsonFields fields(config.json, origin);
  auto named = [&](const char* key) -> std::optional<std::string> {
    if (!fields.has(key)) return std::nullopt;
    auto token = parse_token(config.json.at(key), origin + ": " + key);
    if (!token) return std::nullopt;
    config.declared_tokens.push_back(*token);
    return token->content;
  };
  config.bos_token = named("bos_token");
  config.eos_token = named("eos_token");
  config.unk_token = named("unk_token");
  config.pad_token = named("pad_token");
  for (const char* key : {"sep_token", "cls_token", "mask_token"}) named(key);
  for (const char* key : {"additional_special_tokens", "extra_special_tokens"}) {
    if (!fields.has(key) || !config.json.at(key).is_array()) continue;
    for (const Json& value : config.json.at(key)) {
      if (auto token = parse_token(value, origin + ": " + key)) config.declared_tokens.push_back(*token);
    }
  }
  if (fields.has("added_tokens_decoder") && config.json.at("added_tokens_decoder").is_object()) {
    for (const auto& [id, value] : config.json.at("added_tokens_decoder").items()) {
      if (auto token = parse_token(value, origin + ": added_tokens_decoder." + id)) {
        config.declared_tokens.push_back(*token);
      }
    }
  }
  if (fields.has("chat_template")) config.chat_template = parse_chat_template(config.json.at("chat_template"), origin);
  config.clean_up_tokenization_spaces = fields.get_or<bool>("clean_up_tokenization_spaces", false);
  config.add_bos_token = fields.get_optional<bool>("add_bos_token");
  config.add_eos_token = fields.get_optional<bool>("add_eos_token");
  return config;
}

}  // namespace

TokenizerConfig parse_tokenizer_config(Json json, const std::string& origin) {
  try {
    return parse_checked(std::move(json), origin);
  } catch (const Json::exception& e) {
    fail("{}: unexpected content: {}", origin, e.what());
  }
}

TokenizerConfig read_tokenizer_config(const std::filesystem::path& config_path,
                                      const std::filesystem::path& chat_template_path) {
  TokenizerConfig config;
  if (!config_path.empty() && path_exists(config_path)) {
    Json json;
    try {
      json = read_json_file(config_path);
    } catch (const Json::exception& e) {  // read_json_file reports syntax errors; this is the rest
      fail("{}: invalid JSON: {}", config_path.string(), e.what());
    }
    config = parse_tokenizer_config(std::move(json), config_path.filename().string());
  }
  if (!chat_template_path.empty() && path_exists(chat_template_path)) {
    config.chat_template = read_file(chat_template_path);
  }
  return config;
}

}  // namespace kiln::tok
