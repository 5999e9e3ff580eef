// Measures what BENCHMARKS.md "Generation" reports, through the public LLMPipeline:
//  1. speculative decoding with a draft model (fixed k and adaptive) and prompt lookup against
//     plain greedy decoding on code-like and prose prompts: decode tokens/s, acceptance rate,
//     speedup, and a check that every output equals plain decoding's token for token;
//  2. chat: each turn's TTFT with the previous turns' KV cache reused (a chat session) and
//     without (the same conversation generated statelessly), as the history grows.
// Each figure is the median over --repeats runs; Markdown on stdout.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "kiln/llm_pipeline.hpp"
#include "util/error.hpp"

namespace {

using namespace kiln;

struct Prompt {
  const char* kind;
  const char* text;
};

// Code-like text repeats itself (identifiers, options), prose much less.
constexpr Prompt kPrompts[] = {
    {"code", "SYNOPSIS\n       #include <sys/mman.h>\n\n       void *mmap(void *addr, size_t length, int prot, int flags,\n"
             "                  int fd, off_t offset);\n       int munmap(void *addr, size_t length);\n\n"
             "EXAMPLE\n       The following program prints part of the file specified in its first command-line\n"
             "       argument to standard output.\n\n       #include <sys/mman.h>\n       #include <sys/stat.h>\n"},
    {"prose", "DESCRIPTION\n       The tar program is an archiving utility. It saves many files together into a single "
              "tape or disk archive, and can restore individual files from the archive. When a file is"},
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Decode speed: tokens after the first per second of their generation.
double decode_tokens_per_s(const PerfMetrics& m) {
  double ms = 0;
  for (double t : m.raw.token_latencies_ms) ms += t;
  return ms > 0 ? 1000.0 * double(m.raw.token_latencies_ms.size()) / ms : 0.0;
}

struct Run {
  double tokens_per_s = 0;
  double acceptance = 0;
  std::vector<std::int32_t> tokens;
};

Run measure(LLMPipeline& pipe, const std::string& prompt, const GenerationConfig& config, int repeats) {
  std::vector<double> speeds;
  Run run;
  for (int i = 0; i < repeats; ++i) {
    const DecodedResults r = pipe.generate(prompt, config);
    speeds.push_back(decode_tokens_per_s(r.perf_metrics));
    run.acceptance = r.perf_metrics.raw.num_proposed_tokens > 0
                         ? double(r.perf_metrics.raw.num_accepted_tokens) / double(r.perf_metrics.raw.num_proposed_tokens)
                         : 0.0;
    run.tokens = r.tokens[0];
  }
  run.tokens_per_s = median(speeds);
  return run;
}

void speculative_table(const std::string& model, const std::string& draft, std::int64_t new_tokens, int repeats) {
  LLMPipeline plain(model);
  PipelineProperties fixed_props, adaptive_props;
  fixed_props.draft = adaptive_props.draft = draft_model(draft);
  fixed_props.adaptive_speculation = false;
  LLMPipeline fixed(model, "CPU", fixed_props), adaptive(model, "CPU", adaptive_props);
  GenerationConfig greedy = plain.get_generation_config();
  greedy.do_sample = false;
  greedy.max_new_tokens = new_tokens;
  greedy.ignore_eos = true;
  greedy.apply_chat_template = false;

  fmt::print("| prompt | decoding | decode tokens/s | speedup | acceptance | same tokens as plain |\n");
  fmt::print("|---|---|---:|---:|---:|---|\n");
  for (const Prompt& p : kPrompts) {
    const Run base = measure(plain, p.text, greedy, repeats);
    fmt::print("| {} | plain | {:.1f} | 1.00x | - | - |\n", p.kind, base.tokens_per_s);
    const auto row = [&](const std::string& name, LLMPipeline& pipe, const GenerationConfig& c) {
      const Run r = measure(pipe, p.text, c, repeats);
      fmt::print("| {} | {} | {:.1f} | {:.2f}x | {:.0f}% | {} |\n", p.kind, name, r.tokens_per_s,
                 r.tokens_per_s / base.tokens_per_s, 100 * r.acceptance, r.tokens == base.tokens ? "yes" : "NO");
    };
    for (const std::int64_t k : {2, 4, 6}) {
      GenerationConfig c = greedy;
      c.num_assistant_tokens = k;
      row(fmt::format("draft, k={}", k), fixed, c);
    }
    GenerationConfig c = greedy;
    c.num_assistant_tokens = 5;
    row("draft, adaptive (k≤5)", adaptive, c);
    c = greedy;
    c.max_ngram_size = 3;
    c.num_assistant_tokens = 4;
    row("prompt lookup, k=4", fixed, c);
    row("prompt lookup, adaptive", adaptive, c);
  }
}

void chat_table(const std::string& model, int turns, int repeats) {
  const std::vector<std::string> messages{
      "What does mmap do?", "And munmap?", "Which header declares them?", "What is MAP_PRIVATE?",
      "How do I map a file read-only?", "What happens on a write then?", "What does msync do?", "Thanks. And mprotect?"};
  LLMPipeline pipe(model);
  GenerationConfig c = pipe.get_generation_config();
  c.do_sample = false;
  c.max_new_tokens = 32;
  fmt::print("| turn | prompt tokens | computed with reuse | TTFT with reuse (ms) | TTFT without reuse (ms) |\n");
  fmt::print("|---:|---:|---:|---:|---:|\n");
  std::vector<std::vector<double>> with(static_cast<std::size_t>(turns)), without(static_cast<std::size_t>(turns));
  std::vector<double> input(static_cast<std::size_t>(turns)), computed(static_cast<std::size_t>(turns));
  for (int rep = 0; rep < repeats; ++rep) {
    pipe.start_chat();
    for (int t = 0; t < turns; ++t) {
      // Without reuse: the same conversation so far, generated from scratch.
      ChatHistory history(std::vector<ChatMessage>(pipe.get_chat_history().begin(), pipe.get_chat_history().end()));
      history.push_back({"user", messages[static_cast<std::size_t>(t) % messages.size()]});
      const DecodedResults stateless = pipe.generate(history, c);
      const DecodedResults turn = pipe.generate(messages[static_cast<std::size_t>(t) % messages.size()], c);
      with[static_cast<std::size_t>(t)].push_back(turn.perf_metrics.get_ttft().mean);
      without[static_cast<std::size_t>(t)].push_back(stateless.perf_metrics.get_ttft().mean);
      input[static_cast<std::size_t>(t)] = turn.perf_metrics.get_num_input_tokens().mean;
      computed[static_cast<std::size_t>(t)] = turn.perf_metrics.get_num_prefilled_tokens().mean;
    }
    pipe.finish_chat();
  }
  for (int t = 0; t < turns; ++t) {
    const auto i = static_cast<std::size_t>(t);
    fmt::print("| {} | {:.0f} | {:.0f} | {:.1f} | {:.1f} |\n", t + 1, input[i], computed[i], median(with[i]),
               median(without[i]));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Generation benchmarks for BENCHMARKS.md (speculative decoding, chat KV reuse)"};
  std::string model, draft;
  std::int64_t new_tokens = 128;
  int repeats = 3, turns = 6;
  app.add_option("--model", model, "Main model directory")->required();
  app.add_option("--draft", draft, "Draft model directory (same tokenizer); empty skips the speculative table");
  app.add_option("--new-tokens", new_tokens, "Tokens per generation")->capture_default_str();
  app.add_option("--repeats", repeats, "Runs per figure (median)")->capture_default_str();
  app.add_option("--turns", turns, "Chat turns")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (!draft.empty()) speculative_table(model, draft, new_tokens, repeats);
    fmt::print("\n");
    chat_table(model, turns, repeats);
  } catch (const kiln::Error& e) {
    fmt::print(stderr, "generation_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
