// `kiln chat`: an interactive conversation with streaming answers. Each line is a user turn
// (the pipeline keeps the history and its KV cache); /reset, /system TEXT, /stats and /exit are
// commands. Ctrl-C interrupts the answer being written (it stays in the history as far as it
// got), not the program; at the prompt it only reminds how to leave.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/generation_flags.hpp"
#include "cli/interruptible_stdin.hpp"
#include "cli/standard_streams.hpp"
#include "util/error.hpp"

namespace kiln::cli {
namespace {

constexpr std::int64_t kDefaultMaxNewTokens = 256;

struct ChatOptions {
  PipelineFlags pipeline;
  GenerationFlags generation;
  std::string system;
};

void print_stats(const PerfMetrics& m) {
  const auto row = [](const char* name, MeanStd v, const char* unit) {
    fmt::print(stderr, "  {:<22} {:>10.2f} ± {:<8.2f} {}\n", name, v.mean, v.std, unit);
  };
  fmt::print(stderr, "turns {}, model load {:.1f} ms\n", m.num_calls(), m.load_time_ms);
  row("TTFT", m.get_ttft(), "ms");
  row("TPOT", m.get_tpot(), "ms");
  row("throughput", m.get_throughput(), "tokens/s");
  row("generate duration", m.get_generate_duration(), "ms");
  row("tokenization", m.get_tokenization_duration(), "ms");
  row("detokenization", m.get_detokenization_duration(), "ms");
  row("input tokens", m.get_num_input_tokens(), "");
  row("computed prompt tokens", m.get_num_prefilled_tokens(), "(the rest reused from the KV cache)");
  row("generated tokens", m.get_num_generated_tokens(), "");
  if (!m.raw.num_draft_prefilled_tokens.empty()) {
    row("draft prompt tokens", m.get_num_draft_prefilled_tokens(),
        "(computed by the draft; the rest reused or skipped)");
  }
  if (m.raw.num_proposed_tokens > 0) row("draft acceptance", m.get_acceptance_rate(), "");
}

void chat(const ChatOptions& o) {
  require_open_stdin("kiln chat");
  LLMPipeline pipe = open_pipeline(o.pipeline);
  const GenerationConfig config =
      apply_generation_flags(o.generation, pipe.get_generation_config(), kDefaultMaxNewTokens);
  if (config.num_beams > 1 || config.num_return_sequences > 1) {
    fail("kiln chat streams one answer per turn: --num-beams and --num-return-sequences must be 1");
  }
  std::string system = o.system;
  pipe.start_chat(system);
  InterruptibleStdin input;
  const auto streamer = TextStreamerCallback([&input](const std::string& piece) {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    return input.interrupted() ? StreamingStatus::STOP : StreamingStatus::RUNNING;
  });
  fmt::print(stderr, "kiln chat: /reset, /system TEXT, /stats, /exit; Ctrl-C stops an answer\n");
  std::string line;
  while (true) {
    input.clear();
    fmt::print(stderr, "> ");
    const InterruptibleStdin::Result got = input.read_line(line);
    if (got == InterruptibleStdin::Result::kEnd) {
      fmt::print(stderr, "\n(end of input)\n");
      break;
    }
    if (got == InterruptibleStdin::Result::kInterrupted) {
      fmt::print(stderr, "\n(type /exit or press Ctrl-D to leave)\n");
      continue;
    }
    if (line.empty()) continue;
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      pipe.finish_chat();
      pipe.start_chat(system);
      fmt::print(stderr, "(history cleared)\n");
    } else if (line == "/system" || line.starts_with("/system ")) {
      system = line.size() > 8 ? line.substr(8) : "";
      pipe.finish_chat();
      pipe.start_chat(system);
      fmt::print(stderr, "(system message set; history cleared)\n");
    } else if (line == "/stats") {
      print_stats(pipe.get_perf_metrics());
    } else if (line.starts_with("/")) {
      fmt::print(stderr, "unknown command {}; commands: /reset, /system TEXT, /stats, /exit\n", line);
    } else {
      try {
        pipe.generate(line, config, streamer);
      } catch (const Error& e) {
        // A turn that cannot run (say, the conversation outgrew the context) ends the turn, not the chat.
        fmt::print(stderr, "kiln: error: {}\n", e.what());
        continue;
      }
      std::fputs("\n", stdout);
      std::fflush(stdout);
      if (input.interrupted()) fmt::print(stderr, "(interrupted)\n");
    }
  }
}

}  // namespace

void register_chat_command(CLI::App& app) {
  auto o = std::make_shared<ChatOptions>();
  auto* cmd = app.add_subcommand("chat", "Chat interactively with a model (streamed answers, history kept)");
  add_pipeline_flags(*cmd, o->pipeline);
  cmd->add_option("--system", o->system, "System message for the conversation");
  add_generation_flags(*cmd, o->generation);
  cmd->callback([o] { chat(*o); });
}

}  // namespace kiln::cli
