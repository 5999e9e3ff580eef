// `kiln run`: generate a continuation of one prompt, streaming the text to stdout as it is
// produced; load time, TTFT, TPOT and throughput go to stderr.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <iterator>

#include "cli/commands.hpp"
#include "genai/engine.hpp"
#include "genai/model_loader.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace kiln::cli {
namespace {

constexpr const char* kDefaultPrompt = "Q: What does mmap do?\nA:";

struct RunOptions {
  std::string model;
  std::string prompt = kDefaultPrompt;
  std::optional<std::int64_t> max_new_tokens;
  std::optional<double> temperature;
  std::optional<std::int64_t> top_k;
  std::optional<double> top_p;
  std::optional<std::uint64_t> seed;
  bool ignore_eos = false;
  std::int64_t context = 4096;
};

GenerationConfig generation_config(const RunOptions& o, GenerationConfig c) {
  if (o.max_new_tokens) c.max_new_tokens = *o.max_new_tokens;
  if (!c.max_new_tokens) c.max_new_tokens = 128;
  if (o.temperature) {
    c.do_sample = *o.temperature > 0;
    if (c.do_sample) c.temperature = *o.temperature;
  }
  if (o.top_k) c.top_k = *o.top_k;
  if (o.top_p) c.top_p = *o.top_p;
  if (o.seed) c.rng_seed = *o.seed;
  c.ignore_eos = c.ignore_eos || o.ignore_eos;
  return c;
}

void run(const RunOptions& o) {
  std::string prompt = o.prompt;
  if (prompt == "-") prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());

  Stopwatch load_clock;
  genai::LoadedModel loaded = genai::load_model(o.model.empty() ? default_model_dir() : std::filesystem::path(o.model), {.context_tokens = o.context});
  const double load_ms = load_clock.elapsed_ms();

  const GenerationConfig config = generation_config(o, loaded.generation_defaults);
  std::vector<std::int32_t> ids = loaded.tokenizer.encode(prompt);
  // Special tokens are not text: skipped, as OpenVINO GenAI's streamers do.
  IncrementalDetokenizer detokenizer(loaded.tokenizer, {.skip_special_tokens = true});
  const auto write_out = [](const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);  // the text may contain NUL bytes
    std::fflush(stdout);
  };
  genai::Engine engine(*loaded.model);
  const genai::RequestId id = engine.add_request(ids, config, [&](std::int32_t token) {
    write_out(detokenizer.push(token));
    return StreamingStatus::RUNNING;
  });
  engine.run_until_idle();
  write_out(detokenizer.flush() + "\n");

  const genai::RequestState& r = engine.request(id);
  const double ttft = r.timings.first_token_ms - r.timings.queued_ms;
  const std::int64_t n = r.num_generated();
  const double decode_ms = r.timings.finished_ms - r.timings.first_token_ms;
  const double tpot = n > 1 ? decode_ms / double(n - 1) : 0.0;
  fmt::print(stderr, "load {:.1f} ms | prompt {} tokens | TTFT {:.1f} ms | {} tokens | TPOT {:.2f} ms | {:.1f} tokens/s\n",
             load_ms, ids.size(), ttft, n, tpot, tpot > 0 ? 1000.0 / tpot : 0.0);
}

}  // namespace

void register_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt, streaming it to stdout");
  cmd->add_option("--model,-m", o->model, "Model directory (default: $KILN_MODEL or the embedded model)");
  cmd->add_option("--prompt,-p", o->prompt, "Prompt text, or - to read stdin")->capture_default_str();
  cmd->add_option("--max-new-tokens,-n", o->max_new_tokens, "Tokens to generate (default: the model's, else 128)");
  cmd->add_option("--temperature", o->temperature, "Sampling temperature; 0 is greedy (default: the model's)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-k", o->top_k, "Keep the k most likely tokens (0: off)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", o->top_p, "Keep the smallest set of tokens with this probability mass")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", o->seed, "Random seed for sampling");
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-sequence tokens");
  cmd->add_option("--context", o->context, "KV cache capacity in tokens (capped by the model)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->callback([o] { run(*o); });
}

}  // namespace kiln::cli
