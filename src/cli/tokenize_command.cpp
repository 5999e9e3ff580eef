// `kiln tokenize --model DIR [--no-special] [TEXT | -]`: the ids of TEXT (or of stdin when TEXT
// is "-" or absent) as a JSON array, exactly as Hugging Face `tokenizers` encodes it.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/text_argument.hpp"
#include "genai/model_loader.hpp"
#include "kiln/tokenizer.hpp"

namespace kiln::cli {

void register_tokenize_command(CLI::App& app) {
  struct Options {
    std::string model;
    bool no_special = false;
    std::string text = "-";
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text as a JSON array");
  cmd->add_option("--model", options->model,
                  "Model or tokenizer folder with tokenizer.json, or a GGUF file (default: $KILN_MODEL, else the "
                  "embedded model)");
  cmd->add_flag("--no-special", options->no_special,
                "Do not add the special tokens the tokenizer adds around a text (e.g. BOS)");
  cmd->add_option("text", options->text, "The text; '-' or nothing reads it from stdin");
  cmd->callback([options] {
    const auto dir = options->model.empty() ? default_model_dir() : std::filesystem::path(options->model);
    const Tokenizer tokenizer = genai::model_tokenizer(dir);
    const std::string text = text_argument(options->text, "text");
    fmt::print("[{}]\n", fmt::join(tokenizer.encode(text, !options->no_special), ", "));
  });
}

}  // namespace kiln::cli
