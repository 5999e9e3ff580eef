// Chat prompts from a tokenizer's chat template, exactly as transformers'
// `tokenizer.apply_chat_template(messages, tokenize=False, ...)` renders them: kiln's own Jinja2
// engine in transformers' sandbox (trim_blocks, lstrip_blocks, loopcontrols, tojson,
// raise_exception, strftime_now). A ChatTemplate is immutable; apply() may run on many threads.
#pragma once

#include <nlohmann/json.hpp>

#include <ctime>
#include <functional>
#include <memory>
#include <string>

#include "kiln/chat_history.hpp"

namespace kiln {

class Tokenizer;

struct ChatTemplateOptions {
  bool add_generation_prompt = false;
  // JSON tool schemas ({"type": "function", "function": {...}}), or null: the template's `tools`.
  nlohmann::ordered_json tools;
  // Retrieval documents, or null: the template's `documents`.
  nlohmann::ordered_json documents;
  // More template variables, as extra keyword arguments to apply_chat_template:
  // {"enable_thinking": false}, {"date_string": "26 Jul 2024"}, ... (an object, or null).
  nlohmann::ordered_json variables;
  // The local time strftime_now() formats; the machine's clock when empty.
  std::function<std::tm()> local_time;
};

class ChatTemplate {
 public:
  // The tokenizer's template, with its special tokens (bos_token, eos_token, unk_token,
  // pad_token, ..., additional_special_tokens from tokenizer_config.json) as variables.
  // Throws kiln::Error when the tokenizer has no chat template, or the template does not parse
  // (the message names the line and column).
  explicit ChatTemplate(const Tokenizer& tokenizer);
  // An explicit template; `special_tokens` is an object of variables such as
  // {"bos_token": "<s>", "eos_token": "</s>"} (null for none).
  ChatTemplate(const std::string& source, nlohmann::ordered_json special_tokens, std::string name = "chat template");

  // Renders `messages`, a JSON array of message objects ({"role": ..., "content": ...}).
  // Object key order is kept, as Python keeps it, so parse inputs as ordered_json. Errors the
  // template raises (raise_exception, or a Python TypeError / UndefinedError) are kiln::Errors
  // whose message carries Python's text and the template line and column.
  std::string apply(const nlohmann::ordered_json& messages, const ChatTemplateOptions& options = {}) const;
  // The same for a history of plain (role, content) messages.
  std::string apply(const ChatHistory& history, bool add_generation_prompt) const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace kiln
