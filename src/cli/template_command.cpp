// `kiln template --model DIR --messages FILE.json [--add-generation-prompt] [--tools FILE.json]
// [--var KEY=VALUE ...]`: prints the prompt the model's chat template makes of a conversation,
// byte for byte what transformers' apply_chat_template(tokenize=False) returns.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "genai/model_loader.hpp"
#include "kiln/tokenizer.hpp"
#include "tokenizer/chat_template.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace kiln::cli {
namespace {

// KEY=VALUE where VALUE is JSON (false, 3, "x", [...]) or, when it does not parse, plain text.
std::pair<std::string, nlohmann::ordered_json> parse_variable(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) fail("--var expects KEY=VALUE, got '{}'", text);
  const std::string value = text.substr(eq + 1);
  auto parsed = nlohmann::ordered_json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) parsed = value;
  return {text.substr(0, eq), std::move(parsed)};
}

}  // namespace

void register_template_command(CLI::App& app) {
  struct Options {
    std::string model;
    std::string messages;
    std::string tools;
    bool add_generation_prompt = false;
    std::vector<std::string> variables;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("template", "Print the prompt a model's chat template makes of a conversation");
  cmd->add_option("--model", options->model,
                  "Model or tokenizer folder with tokenizer.json and tokenizer_config.json, or a GGUF file "
                  "(default: $KILN_MODEL, else the embedded model)");
  cmd->add_option("--messages", options->messages,
                  "JSON file with the conversation: [{\"role\": ..., \"content\": ...}, ...]")
      ->required();
  cmd->add_flag("--add-generation-prompt", options->add_generation_prompt,
                "End with the header that starts the assistant's reply");
  cmd->add_option("--tools", options->tools, "JSON file with a list of tool schemas");
  cmd->add_option("--var", options->variables,
                  "Another template variable, KEY=VALUE with VALUE in JSON or plain text "
                  "(e.g. enable_thinking=false, date_string='26 Jul 2024'); repeatable");
  cmd->callback([options] {
    const auto dir = options->model.empty() ? default_model_dir() : std::filesystem::path(options->model);
    const ChatTemplate chat_template(genai::model_tokenizer(dir));
    ChatTemplateOptions render;
    render.add_generation_prompt = options->add_generation_prompt;
    if (!options->tools.empty()) render.tools = read_ordered_json_file(options->tools);
    render.variables = nlohmann::ordered_json::object();
    for (const std::string& variable : options->variables) {
      auto [key, value] = parse_variable(variable);
      render.variables[key] = std::move(value);
    }
    fmt::print("{}", chat_template.apply(read_ordered_json_file(options->messages), render));
  });
}

}  // namespace kiln::cli
