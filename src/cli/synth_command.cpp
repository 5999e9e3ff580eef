// `kiln synth --like llama-3.2-1b|llama-3.1-8b|qwen2.5-0.5b|qwen3-0.6b|CONFIG OUT_DIR [--seed S] [--tokenizer DIR]`:
// writes a Hugging Face checkpoint with random weights of that exact shape, for benchmarks.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/interrupt_guard.hpp"
#include "export/synthetic_checkpoint.hpp"

namespace kiln::cli {

void register_synth_command(CLI::App& app) {
  struct Flags {
    std::string like, out, tokenizer;
    std::uint64_t seed = 0;
    bool quiet = false;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("synth", "Write a random-weight Hugging Face checkpoint shaped like a real model");
  cmd->add_option("--like", f->like, "llama-3.2-1b, llama-3.1-8b, qwen2.5-0.5b, qwen3-0.6b, or a config.json")
      ->required();
  cmd->add_option("output", f->out, "Output directory (must not exist)")->required();
  cmd->add_option("--seed", f->seed, "Seed of the weights")->capture_default_str();
  cmd->add_option("--tokenizer", f->tokenizer,
                  "Copy the tokenizer from this directory (default: generate a byte-level one)");
  cmd->add_flag("--quiet,-q", f->quiet, "No progress bar");
  cmd->callback([f] {
    exporter::SynthOptions o;
    o.like = f->like;
    o.out_dir = f->out;
    o.seed = f->seed;
    if (!f->tokenizer.empty()) o.tokenizer_dir = f->tokenizer;
    o.show_progress = !f->quiet;
    const InterruptGuard interrupt;
    o.cancel = interrupt.cancel();
    const exporter::SynthResult r = exporter::synthesize_checkpoint(o);
    fmt::print("wrote {} ({} parameters, {:.1f} MiB in {} shard(s)) in {:.1f} s\n", f->out, r.num_parameters,
               double(r.weight_bytes) / (1 << 20), r.num_shards, r.seconds);
  });
}

}  // namespace kiln::cli
