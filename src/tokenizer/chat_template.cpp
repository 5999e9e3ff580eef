// ChatTemplate: transformers' apply_chat_template(tokenize=False) over kiln's Jinja engine. The
// variables are transformers' render_jinja_template(...) arguments: messages, tools, documents,
// add_generation_prompt, then the tokenizer's special_tokens_map and the caller's extra kwargs.
#include "tokenizer/chat_template.hpp"

#include "kiln/tokenizer.hpp"
#include "tokenizer/jinja/template.hpp"
#include "tokenizer/tokenizer_access.hpp"
#include "util/error.hpp"

namespace kiln {

struct ChatTemplate::Impl {
  jinja::Template tmpl;
  nlohmann::ordered_json special_tokens;  // an object
};

namespace {

using OrderedJson = nlohmann::ordered_json;

// A token field of tokenizer_config.json: "<s>" or a serialized AddedToken {"content": "<s>"}.
std::optional<std::string> token_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return std::nullopt;
}

// transformers' special_tokens_map: the named special tokens that are set, plus the additional
// ones as a list.
OrderedJson special_tokens_map(const nlohmann::json& config) {
  OrderedJson out = OrderedJson::object();
  if (!config.is_object()) return out;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    auto it = config.find(key);
    if (it == config.end()) continue;
    if (auto text = token_text(*it)) out[key] = *text;
  }
  auto extra = config.find("additional_special_tokens");
  if (extra != config.end() && extra->is_array() && !extra->empty()) {
    OrderedJson list = OrderedJson::array();
    for (const auto& token : *extra) {
      if (auto text = token_text(token)) list.push_back(*text);
    }
    out["additional_special_tokens"] = std::move(list);
  }
  return out;
}

void check_messages(const OrderedJson& messages) {
  if (!messages.is_array()) {
    fail("chat messages must be a JSON array of message objects, got {}", messages.type_name());
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object()) {
      fail("chat message {} must be a JSON object with 'role' and 'content', got {}", i, messages[i].type_name());
    }
  }
}

void check_list_of_objects(const OrderedJson& value, const char* what) {
  if (value.is_null()) return;
  if (!value.is_array()) fail("chat template {} must be a JSON array or null, got {}", what, value.type_name());
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_object()) {
      fail("chat template {} entry {} must be a JSON object, got {}", what, i, value[i].type_name());
    }
  }
}

}  // namespace

ChatTemplate::ChatTemplate(const std::string& source, OrderedJson special_tokens, std::string name) {
  if (special_tokens.is_null()) special_tokens = OrderedJson::object();
  if (!special_tokens.is_object()) {
    fail("chat template special tokens must be a JSON object, got {}", special_tokens.type_name());
  }
  impl_ = std::make_shared<const Impl>(Impl{jinja::Template(source, std::move(name)), std::move(special_tokens)});
}

ChatTemplate::ChatTemplate(const Tokenizer& tokenizer)
    : ChatTemplate(
          [&] {
            if (tokenizer.chat_template().empty()) {
              fail(
                  "the tokenizer has no chat template (tokenizer_config.json has no "
                  "'chat_template' and there is no chat_template.jinja)");
            }
            return tokenizer.chat_template();
          }(),
          special_tokens_map(tok::TokenizerAccess::config(tokenizer)), "chat_template") {}

std::string ChatTemplate::apply(const ChatHistory& history, bool add_generation_prompt) const {
  OrderedJson messages = OrderedJson::array();
  for (const ChatMessage& m : history) messages.push_back({{"role", m.role}, {"content", m.content}});
  ChatTemplateOptions options;
  options.add_generation_prompt = add_generation_prompt;
  return apply(messages, options);
}

std::string Tokenizer::apply_chat_template(const ChatHistory& history, bool add_generation_prompt,
                                           const std::string& chat_template) const {
  if (chat_template.empty()) return ChatTemplate(*this).apply(history, add_generation_prompt);
  return ChatTemplate(chat_template, special_tokens_map(tok::TokenizerAccess::config(*this)), "chat_template")
      .apply(history, add_generation_prompt);
}

std::string ChatTemplate::apply(const OrderedJson& messages, const ChatTemplateOptions& options) const {
  check_messages(messages);
  check_list_of_objects(options.tools, "tools");
  check_list_of_objects(options.documents, "documents");
  if (!options.variables.is_null() && !options.variables.is_object()) {
    fail("chat template variables must be a JSON object, got {}", options.variables.type_name());
  }
  OrderedJson context = OrderedJson::object();
  context["messages"] = messages;
  context["tools"] = options.tools;
  context["documents"] = options.documents;
  context["add_generation_prompt"] = options.add_generation_prompt;
  for (const auto& [key, value] : impl_->special_tokens.items()) context[key] = value;
  if (options.variables.is_object()) {
    for (const auto& [key, value] : options.variables.items()) {
      if (key == "messages" || key == "tools" || key == "documents" || key == "add_generation_prompt") {
        fail("chat template variable '{}' is set by its own option, not by variables", key);
      }
      context[key] = value;  // kwargs overwrite special tokens, as in transformers
    }
  }
  jinja::RenderOptions render_options;
  render_options.local_time = options.local_time;
  return impl_->tmpl.render(context, render_options);
}

}  // namespace kiln
