// `kiln detokenize --model DIR [--skip-special] ID...`: the text of a list of token ids, decoded
// as transformers' tokenizer.decode does (clean-up as tokenizer_config.json says), then a newline.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "genai/model_loader.hpp"
#include "kiln/tokenizer.hpp"
#include "util/error.hpp"

namespace kiln::cli {

void register_detokenize_command(CLI::App& app) {
  struct Options {
    std::string model;
    bool skip_special = false;
    std::vector<std::int64_t> ids;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("detokenize", "Print the text of a list of token ids");
  cmd->add_option("--model", options->model,
                  "Model or tokenizer folder with tokenizer.json, or a GGUF file (default: $KILN_MODEL, else the "
                  "embedded model)");
  cmd->add_flag("--skip-special", options->skip_special, "Leave out special tokens such as BOS/EOS");
  cmd->add_option("ids", options->ids, "Token ids")->required();
  cmd->callback([options] {
    const auto dir = options->model.empty() ? default_model_dir() : std::filesystem::path(options->model);
    const Tokenizer tokenizer = genai::model_tokenizer(dir);
    std::vector<std::int32_t> ids;
    for (const std::int64_t id : options->ids) {
      // HF skips unknown ids silently; on the command line an unknown id is a mistake to report.
      if (id < 0 || id > INT32_MAX || !tokenizer.has_id(static_cast<std::int32_t>(id))) {
        fail("token id {} is not in the vocabulary of {} (size {})", id, dir.string(), tokenizer.vocab_size());
      }
      ids.push_back(static_cast<std::int32_t>(id));
    }
    fmt::print("{}\n", tokenizer.decode(ids, options->skip_special));
  });
}

}  // namespace kiln::cli
