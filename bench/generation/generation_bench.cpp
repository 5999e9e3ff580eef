// Measures what BENCHMARKS.md "Generation" reports, through the public LLMPipeline:
//  1. speculative decoding with a draft model (fixed k and adaptive) and prompt lookup against
//     plain greedy decoding on code-like and prose prompts: decode tokens/s, acceptance rate,
//     speedup, and a check that every output equals plain decoding's token for token;
//  2. the adaptive draft in a chat, turn by turn, against plain decoding of the same chat;
//  3. chat: each turn's TTFT with the previous turns' KV cache reused (a chat session) and
//     without (the same conversation generated statelessly), as the history grows.
//  4. the floor: plain and adaptive-speculative decoding alternated run by run (ABBA...) on
//     prompts where the draft rarely agrees, wall-clock and user CPU time per generated token
//     (getrusage: far less sensitive to other tenants than wall time), ratio medians and spread.
// Each figure is the median over --repeats runs, the variants of a table interleaved run by run
// (so load from other jobs hits them alike); Markdown on stdout, with the load average.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>

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
    {"code",
     "SYNOPSIS\n       #include <sys/mman.h>\n\n       void *mmap(void *addr, size_t length, int prot, int flags,\n"
     "                  int fd, off_t offset);\n       int munmap(void *addr, size_t length);\n\n"
     "EXAMPLE\n       The following program prints part of the file specified in its first command-line\n"
     "       argument to standard output.\n\n       #include <sys/mman.h>\n       #include <sys/stat.h>\n"},
    {"prose",
     "DESCRIPTION\n       The tar program is an archiving utility. It saves many files together into a single "
     "tape or disk archive, and can restore individual files from the archive. When a file is"},
    // A long prompt: the draft has ~300 tokens to catch up before it can propose anything.
    {"long",
     "DESCRIPTION\n       mmap() creates a new mapping in the virtual address space of the calling process. "
     "The starting address for the new mapping is specified in addr. The length argument specifies the "
     "length of the mapping (which must be greater than 0).\n\n       If addr is NULL, then the kernel "
     "chooses the (page-aligned) address at which to create the mapping; this is the most portable "
     "method of creating a new mapping. If addr is not NULL, then the kernel takes it as a hint about "
     "where to place the mapping; on Linux, the kernel will pick a nearby page boundary and attempt to "
     "create the mapping there. If another mapping already exists there, the kernel picks a new address "
     "that may or may not depend on the hint. The address of the new mapping is returned as the result "
     "of the call.\n\n       The contents of a file mapping are initialized using length bytes "
     "starting at offset offset in the file (or other object) referred to by the file descriptor fd. "
     "offset must be a multiple of the page size as returned by sysconf(_SC_PAGE_SIZE).\n\n       After "
     "the mmap() call has returned, the file descriptor, fd, can be closed immediately without "
     "invalidating the mapping.\n\n       The prot argument describes the desired memory protection of "
     "the mapping (and must not conflict with the open mode of the file). It is either PROT_NONE or the "
     "bitwise OR of one or more of the following flags:\n\n       PROT_EXEC  Pages may be executed.\n"
     "       PROT_READ  Pages may be read.\n       PROT_WRITE Pages may be written.\n       PROT_NONE  "
     "Pages may not be accessed.\n\nRETURN VALUE\n       On success, mmap() returns a pointer to the "},
};

// The machine's 1-minute load average, to print beside each table (a shared machine).
std::string load_average() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? fmt::format("{:.2f}", load[0]) : "unknown";
}

// The q-quantile (nearest rank) of the samples.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * double(v.size() - 1) + 0.5)];
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

// Decode speed: tokens after the first per second of their generation.
double decode_tokens_per_s(const PerfMetrics& m) {
  double ms = 0;
  for (double t : m.raw.token_latencies_ms) ms += t;
  return ms > 0 ? 1000.0 * double(m.raw.token_latencies_ms.size()) / ms : 0.0;
}

// One configuration of the speculative table: a pipeline and the config it decodes with.
struct Variant {
  Variant(std::string variant_name, LLMPipeline* pipeline, GenerationConfig generation_config)
      : name(std::move(variant_name)), pipe(pipeline), config(std::move(generation_config)) {}

  std::string name;
  LLMPipeline* pipe;
  GenerationConfig config;
  std::vector<double> speeds;    // decode tokens/s per round
  std::vector<double> speedups;  // over plain decoding in the same round
  double acceptance = 0;
  std::int64_t proposed = 0;  // candidates proposed in the last run (0: it decoded plainly)
  bool same_tokens = true;
};

// Every round runs each variant once, back to back (plain first), so machine load hits all
// variants alike; a speedup is the median of per-round ratios to that round's plain run.
void measure_interleaved(std::vector<Variant>& variants, const std::string& prompt, int repeats) {
  std::vector<std::int32_t> plain_tokens;
  for (int round = 0; round < repeats; ++round) {
    double plain_speed = 0;
    for (Variant& v : variants) {
      const DecodedResults r = v.pipe->generate(prompt, v.config);
      const double speed = decode_tokens_per_s(r.perf_metrics);
      if (&v == &variants.front()) {
        plain_speed = speed;
        plain_tokens = r.tokens[0];
      }
      v.speeds.push_back(speed);
      v.speedups.push_back(speed / plain_speed);
      const auto& raw = r.perf_metrics.raw;
      v.acceptance =
          raw.num_proposed_tokens > 0 ? double(raw.num_accepted_tokens) / double(raw.num_proposed_tokens) : 0.0;
      v.proposed = raw.num_proposed_tokens;
      v.same_tokens = v.same_tokens && r.tokens[0] == plain_tokens;
    }
  }
}

void speculative_table(const std::string& model, const std::string& draft, std::int64_t new_tokens, int repeats) {
  PipelineProperties fixed_props, adaptive_props;
  fixed_props.draft = adaptive_props.draft = draft_model(draft);
  fixed_props.adaptive_speculation = false;
  LLMPipeline fixed(model, "CPU", fixed_props), adaptive(model, "CPU", adaptive_props);
  LLMPipeline plain(model), plain2(model);
  GenerationConfig greedy = plain.get_generation_config();
  greedy.do_sample = false;
  greedy.max_new_tokens = new_tokens;
  greedy.ignore_eos = true;
  greedy.apply_chat_template = false;

  fmt::print(
      "| prompt | tokens | decoding | decode tokens/s | speedup | acceptance (last run) | same tokens as plain |\n");
  fmt::print("|---|---:|---|---:|---:|---:|---|\n");
  for (const Prompt& p : kPrompts) {
    std::vector<Variant> variants{Variant("plain", &plain, greedy)};
    for (const std::int64_t k : {2, 4, 6}) {
      GenerationConfig c = greedy;
      c.num_assistant_tokens = k;
      variants.emplace_back(fmt::format("draft, k={}", k), &fixed, c);
    }
    GenerationConfig c = greedy;
    c.num_assistant_tokens = 5;
    variants.emplace_back("draft, adaptive (k≤5)", &adaptive, c);
    c = greedy;
    c.max_ngram_size = 3;
    c.num_assistant_tokens = 4;
    variants.emplace_back("prompt lookup, k=4", &fixed, c);
    variants.emplace_back("prompt lookup, adaptive", &adaptive, c);
    // The same work on another pipeline instance: how far identical decoding moves between
    // instances on this machine (the noise band for the rows above).
    variants.emplace_back("plain, second pipeline", &plain2, greedy);
    measure_interleaved(variants, p.text, repeats);
    const std::size_t prompt_tokens = plain.get_tokenizer().encode(p.text).size();
    for (const Variant& v : variants) {
      const bool baseline = &v == &variants.front();
      const std::string acceptance =
          v.proposed > 0 ? fmt::format("{:.0f}% of {}", 100 * v.acceptance, v.proposed) : "none proposed";
      fmt::print("| {} | {} | {} | {:.1f} | {:.2f}x | {} | {} |\n", p.kind, prompt_tokens, v.name, median(v.speeds),
                 median(v.speedups), baseline ? "-" : acceptance, baseline ? "-" : (v.same_tokens ? "yes" : "NO"));
    }
  }
}

// Speculation in a chat: each turn's decode speed with the adaptive draft over plain decoding
// of the same conversation (two chat sessions side by side, the same greedy answers), and the
// prompt tokens the draft computed (its KV cache carries over between turns like the main one's),
// also for a third session that always speculates (where the draft does compute).
void chat_speculative_table(const std::string& model, const std::string& draft, int turns, int repeats) {
  const std::vector<std::string> messages{"What does mmap do?", "And munmap?", "Which header declares them?",
                                          "What is MAP_PRIVATE?", "How do I map a file read-only?"};
  PipelineProperties props, fixed_props;
  props.draft = fixed_props.draft = draft_model(draft);
  fixed_props.adaptive_speculation = false;
  LLMPipeline plain(model), adaptive(model, "CPU", props), fixed(model, "CPU", fixed_props);
  GenerationConfig c = plain.get_generation_config();
  c.do_sample = false;
  c.max_new_tokens = 64;
  c.ignore_eos = true;
  GenerationConfig with_draft = c;
  with_draft.num_assistant_tokens = 5;
  const auto n = static_cast<std::size_t>(turns);
  std::vector<std::vector<double>> plain_speed(n), draft_speed(n), ratio(n);
  std::vector<std::vector<double>> fixed_ratio(n);
  std::vector<double> draft_prefilled(n), fixed_draft_prefilled(n), fixed_prefilled(n);
  std::vector<double> history(n);
  bool same = true;
  for (int rep = 0; rep < repeats; ++rep) {
    plain.start_chat();
    adaptive.start_chat();
    fixed.start_chat();
    for (std::size_t t = 0; t < n; ++t) {
      const std::string& m = messages[t % messages.size()];
      const DecodedResults a = plain.generate(m, c);
      const DecodedResults b = adaptive.generate(m, with_draft);
      const DecodedResults f = fixed.generate(m, with_draft);
      same = same && a.tokens == b.tokens && a.tokens == f.tokens;
      fixed_ratio[t].push_back(decode_tokens_per_s(f.perf_metrics) / decode_tokens_per_s(a.perf_metrics));
      fixed_draft_prefilled[t] = f.perf_metrics.get_num_draft_prefilled_tokens().mean;
      fixed_prefilled[t] = f.perf_metrics.get_num_prefilled_tokens().mean;
      plain_speed[t].push_back(decode_tokens_per_s(a.perf_metrics));
      draft_speed[t].push_back(decode_tokens_per_s(b.perf_metrics));
      ratio[t].push_back(draft_speed[t].back() / plain_speed[t].back());
      history[t] = b.perf_metrics.get_num_input_tokens().mean;
      draft_prefilled[t] = b.perf_metrics.get_num_draft_prefilled_tokens().mean;
    }
    plain.finish_chat();
    adaptive.finish_chat();
    fixed.finish_chat();
  }
  fmt::print(
      "| turn | prompt tokens | plain tokens/s | adaptive draft tokens/s | speedup | draft prompt tokens computed | "
      "fixed k=5: speedup | fixed k=5: prompt tokens computed, main / draft |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t t = 0; t < n; ++t) {
    fmt::print("| {} | {:.0f} | {:.1f} | {:.1f} | {:.2f}x | {:.0f} | {:.2f}x | {:.0f} / {:.0f} |\n", t + 1, history[t],
               median(plain_speed[t]), median(draft_speed[t]), median(ratio[t]), draft_prefilled[t],
               median(fixed_ratio[t]), fixed_prefilled[t], fixed_draft_prefilled[t]);
  }
  fmt::print("\nsame answers as plain decoding: {}\n", same ? "yes" : "NO");
}

// Prompts the embedded draft rarely agrees with at k=4 (hex digests: 0% of ~500 candidates;
// Russian prose: ~12%), where speculation can only cost time.
constexpr Prompt kDisagreeingPrompts[] = {
    {"hex", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 9f86d081884c7d659a2feaa0c55ad015"},
    {"russian", "Съешь же ещё этих мягких французских булок, да выпей чаю. Быстрая коричневая лиса"},
};

double user_cpu_ms() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_utime.tv_sec) * 1e3 + double(usage.ru_utime.tv_usec) * 1e-3;
}

// One decoding in the floor measurement: per-run samples of a generate() call.
struct FloorSamples {
  std::vector<double> decode_speed;                // tokens/s after the first token
  std::vector<double> wall_ms;                     // generate() wall time per generated token
  std::vector<double> cpu_ms;                      // user CPU time (every thread of the process) per generated token
  std::int64_t proposed = 0, draft_prefilled = 0;  // summed over the runs
  std::vector<std::int32_t> tokens;

  void run(LLMPipeline& pipe, const std::string& prompt, const GenerationConfig& c) {
    const double cpu_before = user_cpu_ms();
    const DecodedResults r = pipe.generate(prompt, c);
    const double cpu = user_cpu_ms() - cpu_before;
    const double generated = r.perf_metrics.get_num_generated_tokens().mean;
    decode_speed.push_back(decode_tokens_per_s(r.perf_metrics));
    wall_ms.push_back(r.perf_metrics.get_generate_duration().mean / generated);
    cpu_ms.push_back(cpu / generated);
    proposed += r.perf_metrics.raw.num_proposed_tokens;
    draft_prefilled += static_cast<std::int64_t>(r.perf_metrics.get_num_draft_prefilled_tokens().mean);
    tokens = r.tokens[0];
  }
};

// "median [p10, p90]" of the per-round ratios.
std::string spread(const std::vector<double>& ratios) {
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", median(ratios), quantile(ratios, 0.1), quantile(ratios, 0.9));
}

// Per-round ratios, as speeds (above 1: the adaptive run was faster).
std::vector<double> ratios(const std::vector<double>& plain, const std::vector<double>& adaptive, bool speed) {
  std::vector<double> out;
  for (std::size_t i = 0; i < plain.size(); ++i) out.push_back(speed ? adaptive[i] / plain[i] : plain[i] / adaptive[i]);
  return out;
}

void floor_table(const std::string& model, const std::string& draft, std::int64_t new_tokens, int rounds) {
  PipelineProperties adaptive_props, fixed_props;
  adaptive_props.draft = fixed_props.draft = draft_model(draft);
  fixed_props.adaptive_speculation = false;
  LLMPipeline plain(model), adaptive(model, "CPU", adaptive_props), fixed(model, "CPU", fixed_props), plain2(model);
  GenerationConfig c = plain.get_generation_config();
  c.do_sample = false;
  c.max_new_tokens = new_tokens;
  c.ignore_eos = true;
  c.apply_chat_template = false;
  GenerationConfig speculative = c;
  speculative.num_assistant_tokens = 5;
  GenerationConfig fixed_k = c;
  fixed_k.num_assistant_tokens = 4;
  fmt::print(
      "| prompt | tokens | acceptance at k=4 | rounds | plain decode tokens/s | adaptive decode tokens/s | "
      "decode speed ratio, median [p10, p90] | wall ratio per token | plain user CPU ms/token | "
      "adaptive user CPU ms/token | CPU ratio per token | plain on a second pipeline: CPU ratio | "
      "adaptive: proposed, draft prompt tokens | same tokens |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|---|---|---|\n");
  for (const Prompt& p : kDisagreeingPrompts) {
    const DecodedResults probe = fixed.generate(p.text, fixed_k);
    const auto& probe_raw = probe.perf_metrics.raw;
    // a: plain, b: adaptive, control: plain again on another instance (the A/A noise band).
    FloorSamples a, b, control, warmup;
    warmup.run(plain, p.text, c);
    warmup.run(adaptive, p.text, speculative);
    warmup.run(plain2, p.text, c);
    bool same = true;
    for (int round = 0; round < rounds; ++round) {
      // ABC, CBA, ...: each decoding runs first, in the middle and last equally often.
      if (round % 2 == 0) {
        a.run(plain, p.text, c);
        b.run(adaptive, p.text, speculative);
        control.run(plain2, p.text, c);
      } else {
        control.run(plain2, p.text, c);
        b.run(adaptive, p.text, speculative);
        a.run(plain, p.text, c);
      }
      same = same && a.tokens == b.tokens;
    }
    fmt::print(
        "| {} | {} | {:.0f}% of {} | {} | {:.1f} | {:.1f} | {} | {} | {:.3f} | {:.3f} | {} | {} | {}, {} | {} |\n",
        p.kind, plain.get_tokenizer().encode(p.text).size(),
        100.0 * double(probe_raw.num_accepted_tokens) /
            double(std::max<std::int64_t>(probe_raw.num_proposed_tokens, 1)),
        probe_raw.num_proposed_tokens, rounds, median(a.decode_speed), median(b.decode_speed),
        spread(ratios(a.decode_speed, b.decode_speed, true)), spread(ratios(a.wall_ms, b.wall_ms, false)),
        median(a.cpu_ms), median(b.cpu_ms), spread(ratios(a.cpu_ms, b.cpu_ms, false)),
        spread(ratios(a.cpu_ms, control.cpu_ms, false)), b.proposed, b.draft_prefilled, same ? "yes" : "NO");
  }
}

void chat_table(const std::string& model, int turns, int repeats) {
  const std::vector<std::string> messages{"What does mmap do?",
                                          "And munmap?",
                                          "Which header declares them?",
                                          "What is MAP_PRIVATE?",
                                          "How do I map a file read-only?",
                                          "What happens on a write then?",
                                          "What does msync do?",
                                          "Thanks. And mprotect?"};
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
  int repeats = 3, turns = 6, floor_rounds = 41;
  bool floor_only = false;
  app.add_option("--model", model, "Main model directory")->required();
  app.add_option("--draft", draft, "Draft model directory (same tokenizer); empty skips the speculative table");
  app.add_option("--new-tokens", new_tokens, "Tokens per generation")->capture_default_str();
  app.add_option("--repeats", repeats, "Runs per figure (median)")->capture_default_str();
  app.add_option("--turns", turns, "Chat turns")->capture_default_str();
  app.add_option("--floor-rounds", floor_rounds, "Alternated plain / adaptive rounds of the floor table")
      ->capture_default_str();
  app.add_flag("--floor-only", floor_only, "Only the floor table (needs --draft)");
  CLI11_PARSE(app, argc, argv);
  try {
    fmt::print("load average at start: {}\n\n", load_average());
    if (!draft.empty()) {
      floor_table(model, draft, new_tokens, floor_rounds);
      fmt::print("\nload average: {}\n\n", load_average());
      if (floor_only) return 0;
      speculative_table(model, draft, new_tokens, repeats);
      fmt::print("\nload average: {}\n\n", load_average());
      chat_speculative_table(model, draft, turns, repeats);
      fmt::print("\nload average: {}\n", load_average());
    }
    fmt::print("\n");
    chat_table(model, turns, repeats);
    fmt::print("\nload average at end: {}\n", load_average());
  } catch (const kiln::Error& e) {
    fmt::print(stderr, "generation_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
