// `kiln run`: generate a continuation of one prompt through LLMPipeline, streaming the text to
// stdout as it is produced (several answers — beams or samples — are printed when done, one
// block each); perf metrics and, with --logprobs, token log-probabilities go to stderr.
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/generation_flags.hpp"
#include "cli/text_argument.hpp"
#include "util/error.hpp"

namespace kiln::cli {
namespace {

constexpr const char* kDefaultPrompt = "Q: What does mmap do?\nA:";
constexpr std::int64_t kDefaultMaxNewTokens = 128;

struct RunOptions {
  PipelineFlags pipeline;
  GenerationFlags generation;
  std::string prompt = kDefaultPrompt;
};

void write_out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);  // the text may contain NUL bytes
  std::fflush(stdout);
}

void print_logprobs(const Tokenizer& tokenizer, const std::vector<TokenLogprob>& logprobs) {
  for (const TokenLogprob& t : logprobs) {
    std::string line = fmt::format("{:>8.4f}  {:>6}  {:?}", t.logprob, t.token, tokenizer.decode(std::vector{t.token}));
    for (const auto& [id, lp] : t.top) line += fmt::format("  | {} {:.4f}", id, lp);
    fmt::print(stderr, "{}\n", line);
  }
}

// A sequence that ended for length short of every length limit ran out of context: said, so a
// short answer is never mistaken for the model's choice.
void warn_if_context_ended(const DecodedResults& r, const GenerationConfig& config) {
  const auto prompt = static_cast<std::size_t>(r.perf_metrics.get_num_input_tokens().mean);
  for (std::size_t i = 0; i < r.tokens.size(); ++i) {
    const std::size_t generated = r.tokens[i].size();
    const bool below_new = !config.max_new_tokens || generated < static_cast<std::size_t>(*config.max_new_tokens);
    const bool below_length = !config.max_length || prompt + generated < static_cast<std::size_t>(*config.max_length);
    if (r.finish_reasons[i] == GenerationFinishReason::LENGTH && below_new && below_length) {
      fmt::print(stderr,
                 "kiln run: stopped after {} new tokens: the context ({} tokens with the prompt) is full; --context "
                 "raises it, up to the model's limit\n",
                 generated, prompt + generated);
      return;
    }
  }
}

void run(const RunOptions& o) {
  const std::string prompt = text_argument(o.prompt, "--prompt");
  if (prompt.empty() && o.prompt == "-") {
    fail("--prompt -: standard input was empty (give the prompt text there, or as --prompt TEXT)");
  }
  LLMPipeline pipe = open_pipeline(o.pipeline);
  // NOTE: `kiln run` continues the prompt as raw text unless --apply-chat-template true: it is
  // the completion tool (kiln chat is the conversation one).
  GenerationConfig base = pipe.get_generation_config();
  base.apply_chat_template = false;
  const GenerationConfig config = apply_generation_flags(o.generation, base, kDefaultMaxNewTokens);
  const bool single = config.num_beams == 1 && config.num_return_sequences == 1;
  StreamerVariant streamer;
  if (single) {
    streamer = TextStreamerCallback([](const std::string& piece) {
      write_out(piece);
      return StreamingStatus::RUNNING;
    });
  }
  const DecodedResults r = pipe.generate(prompt, config, streamer);
  warn_if_context_ended(r, config);
  if (single) {
    write_out("\n");
  } else {
    for (std::size_t i = 0; i < r.texts.size(); ++i) {
      write_out(fmt::format("=== {} (score {:.4f}) ===\n{}\n", i + 1, r.scores[i], r.texts[i]));
    }
  }
  for (const auto& logprobs : r.logprobs) print_logprobs(pipe.get_tokenizer(), logprobs);
  fmt::print(stderr, "{}\n", format_perf_metrics(r.perf_metrics));
}

}  // namespace

void register_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt, streaming it to stdout");
  add_pipeline_flags(*cmd, o->pipeline);
  cmd->add_option("--prompt,-p", o->prompt, "Prompt text, or - to read stdin")->capture_default_str();
  add_generation_flags(*cmd, o->generation);
  cmd->callback([o] { run(*o); });
}

}  // namespace kiln::cli
