// `kiln eval ppl|compare|task|repetition`: model quality on text, task sets and prompts. Each
// subcommand loads the model(s), calls src/eval, prints a table, and with --json FILE writes the
// results (plus the command's settings) atomically.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>

#include "cli/commands.hpp"
#include "cli/device_flags.hpp"
#include "cli/json_output.hpp"
#include "cli/option_checks.hpp"
#include "eval/compare.hpp"
#include "eval/perplexity.hpp"
#include "eval/repetition.hpp"
#include "eval/report_json.hpp"
#include "eval/task_eval.hpp"
#include "genai/model_loader.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace kiln::cli {
namespace {

constexpr std::int64_t kDefaultContext = 1024;  // tokens; capped by the model's positions

struct EvalOptions {
  std::string model;
  std::string reference;
  std::string text;
  std::string tasks;
  std::string prompts;
  std::optional<std::int64_t> context;
  std::optional<std::int64_t> stride;
  std::int64_t max_new_tokens = 128;
  std::string json;
  DeviceFlags device;  // every model of the command runs on this device
};

std::filesystem::path model_dir(const std::string& flag) {
  return flag.empty() ? default_model_dir() : std::filesystem::path(flag);
}

struct Loaded {
  genai::LoadedModel model;
  double load_seconds = 0;
};

Loaded load(const std::filesystem::path& dir, genai::LoadOptions options, const DeviceFlags& device) {
  options.device = device.device;
  options.properties = device_properties(device);
  Stopwatch clock;
  genai::LoadedModel m = genai::load_model(dir, options);
  return {std::move(m), clock.elapsed_ms() / 1000.0};
}

// The windows: --context (default the model's positions, at most kDefaultContext) and --stride
// (default half the context).
eval::WindowOptions window_options(const EvalOptions& o, const ir::ModelConfig& config) {
  eval::WindowOptions w;
  w.context = o.context.value_or(std::min(kDefaultContext, config.max_position_embeddings));
  w.stride = o.stride.value_or(std::max<std::int64_t>(1, w.context / 2));
  return w;
}

// Model text may hold anything; invalid UTF-8 is written as U+FFFD rather than failing.
std::string dump_json(const Json& j, int indent) { return j.dump(indent, ' ', false, Json::error_handler_t::replace); }

// A string in a table cell: quoted, with newlines and control characters escaped.
std::string quoted(const std::string& s) { return dump_json(Json(s), -1); }

void write_json(JsonOutput& json, const EvalOptions& o, const char* command, Json results) {
  if (!json.enabled()) return;
  Json out = {{"command", command}, {"model", model_dir(o.model).string()}, {"results", std::move(results)}};
  if (!o.reference.empty()) out["reference"] = o.reference;
  json.write(out);
}

void run_ppl(const EvalOptions& o) {
  JsonOutput json(o.json);  // before the work: an unwritable path fails now
  const std::string text = read_file(o.text);
  Loaded m = load(model_dir(o.model), {.context_tokens = o.context.value_or(kDefaultContext)}, o.device);
  const eval::WindowOptions w = window_options(o, m.model.model->config());
  const eval::PerplexityResult r = eval::evaluate_perplexity(*m.model.model, m.model.tokenizer, text, w);
  fmt::print("perplexity of {} on {}\n", model_dir(o.model).string(), o.text);
  fmt::print("  {:<16} {} tokens, stride {}\n", "window", w.context, w.stride);
  fmt::print("  {:<16} {} ({} scored, {} windows)\n", "tokens", r.num_tokens, r.num_scored, r.num_windows);
  fmt::print("  {:<16} {}\n", "bytes", r.num_bytes);
  fmt::print("  {:<16} {:.4f}\n", "perplexity", r.ppl);
  fmt::print("  {:<16} {:.4f}\n", "bits per byte", r.bits_per_byte);
  fmt::print("  {:<16} load {:.2f} s, eval {:.2f} s ({:.0f} tokens/s)\n", "time", m.load_seconds, r.seconds,
             static_cast<double>(r.num_scored) / std::max(r.seconds, 1e-9));
  Json j = eval::to_json(r);
  j["context"] = w.context;
  j["stride"] = w.stride;
  j["text"] = o.text;
  write_json(json, o, "ppl", std::move(j));
}

void run_compare(const EvalOptions& o) {
  JsonOutput json(o.json);  // before the work: an unwritable path fails now
  const std::string text = read_file(o.text);
  const genai::LoadOptions load_options{.context_tokens = o.context.value_or(kDefaultContext)};
  Loaded model = load(model_dir(o.model), load_options, o.device);
  Loaded reference = load(o.reference, load_options, o.device);
  if (model.model.tokenizer.fingerprint() != reference.model.tokenizer.fingerprint()) {
    fail("--model {} and --reference {} have different tokenizers; compare needs both to read the same token ids",
         model_dir(o.model).string(), o.reference);
  }
  const eval::WindowOptions w = window_options(o, reference.model.model->config());
  const std::vector<std::int32_t> ids = eval::encode_eval_text(reference.model.tokenizer, text);
  const eval::CompareResult r =
      eval::compare_models(*model.model.model, *reference.model.model, ids, static_cast<std::int64_t>(text.size()), w);
  fmt::print("{} against reference {} on {}\n", model_dir(o.model).string(), o.reference, o.text);
  fmt::print("  {:<22} {} tokens, stride {}\n", "window", w.context, w.stride);
  fmt::print("  {:<22} {} ({} windows)\n", "positions compared", r.num_scored, r.num_windows);
  fmt::print("  {:<22} {:.6f} nats (max {:.4f})\n", "mean KL(ref || model)", r.mean_kl, r.max_kl);
  fmt::print("  {:<22} {:.4f}\n", "top-1 agreement", r.top1_agreement);
  fmt::print("  {:<22} {:>10} {:>10}\n", "", "model", "reference");
  fmt::print("  {:<22} {:>10.4f} {:>10.4f}\n", "perplexity", r.ppl_model, r.ppl_reference);
  fmt::print("  {:<22} {:>10.4f} {:>10.4f}\n", "bits per byte", r.bits_per_byte_model, r.bits_per_byte_reference);
  fmt::print("  {:<22} load {:.2f} s + {:.2f} s, eval {:.2f} s\n", "time", model.load_seconds, reference.load_seconds,
             r.seconds);
  Json j = eval::to_json(r);
  j["context"] = w.context;
  j["stride"] = w.stride;
  j["text"] = o.text;
  write_json(json, o, "compare", std::move(j));
}

// Sequences generated side by side; the KV cache holds this many at the needed context.
constexpr std::int64_t kGenerationBatch = 8;

void run_task(const EvalOptions& o) {
  JsonOutput json(o.json);  // before the work: an unwritable path fails now
  const std::vector<eval::TaskItem> tasks = eval::load_tasks(o.tasks);
  const std::filesystem::path dir = model_dir(o.model);
  // The context the prompts need is known only with the tokenizer, before the model loads.
  const std::int64_t context = eval::task_context_tokens(genai::model_tokenizer(dir), tasks);
  Loaded m = load(
      dir, {.context_tokens = context, .max_sequences = std::min<std::int64_t>(kGenerationBatch, std::ssize(tasks))},
      o.device);
  const eval::TaskReport r =
      eval::evaluate_tasks(*m.model.model, m.model.tokenizer, m.model.generation_defaults.eos_token_ids, tasks);
  fmt::print("{:<14} {:<5} {:<40} {}\n", "item", "right", "answer", "completion");
  for (const eval::TaskResult& t : r.items) {
    fmt::print("{:<14} {:<5} {:<40} {}\n", t.id, t.right ? "yes" : "no", quoted(t.answer), quoted(t.completion));
  }
  fmt::print("\naccuracy {}/{} = {:.1f}% | load {:.2f} s, eval {:.2f} s\n", r.num_right, r.items.size(),
             100.0 * r.accuracy, m.load_seconds, r.seconds);
  Json j = eval::to_json(r);
  j["tasks"] = o.tasks;
  write_json(json, o, "task", std::move(j));
}

void run_repetition(const EvalOptions& o) {
  JsonOutput json(o.json);  // before the work: an unwritable path fails now
  const std::vector<std::string> prompts = eval::load_prompts(o.prompts);
  const std::filesystem::path dir = model_dir(o.model);
  std::int64_t longest = 0;
  const Tokenizer tokenizer = genai::model_tokenizer(dir);
  for (const std::string& p : prompts) longest = std::max<std::int64_t>(longest, std::ssize(tokenizer.encode(p)));
  Loaded m = load(dir,
                  {.context_tokens = longest + o.max_new_tokens,
                   .max_sequences = std::min<std::int64_t>(kGenerationBatch, std::ssize(prompts))},
                  o.device);
  const eval::RepetitionReport r = eval::evaluate_repetition(
      *m.model.model, m.model.tokenizer, m.model.generation_defaults.eos_token_ids, prompts, o.max_new_tokens);
  fmt::print("{:>6} {:>7}  {}\n", "tokens", "rep-4g", "prompt");
  for (const eval::RepetitionItem& g : r.items) {
    fmt::print("{:>6} {:>7.3f}  {}\n", g.num_tokens, g.ratio, quoted(g.prompt));
  }
  fmt::print("\nmean repeated 4-gram ratio {:.4f} over {} prompts | load {:.2f} s, eval {:.2f} s\n", r.mean_ratio,
             r.items.size(), m.load_seconds, r.seconds);
  Json j = eval::to_json(r);
  j["prompts"] = o.prompts;
  j["max_new_tokens"] = o.max_new_tokens;
  write_json(json, o, "repetition", std::move(j));
}

void add_model_flags(CLI::App* cmd, EvalOptions& o) {
  cmd->add_option("--model,-m", o.model, "Model directory or GGUF file (default: $KILN_MODEL or the embedded model)");
  cmd->add_option("--json", o.json, "Also write the results as JSON to this file");
  add_device_flags(*cmd, o.device);
}

void add_window_flags(CLI::App* cmd, EvalOptions& o) {
  cmd->add_option("--text", o.text, "UTF-8 text file to score")->required();
  cmd->add_option("--context", o.context, "Tokens per window (default: the model's positions, at most 1024)")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 40));
  cmd->add_option("--stride", o.stride, "Tokens between window starts (default: half the context)")->check(at_least(1));
}

}  // namespace

void register_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  auto* eval = app.add_subcommand("eval", "Measure model quality: perplexity, fidelity, task accuracy, repetition");
  eval->require_subcommand(1);

  auto* ppl = eval->add_subcommand("ppl", "Sliding-window perplexity and bits per byte of a text");
  add_model_flags(ppl, *o);
  add_window_flags(ppl, *o);
  ppl->callback([o] { run_ppl(*o); });

  auto* compare = eval->add_subcommand(
      "compare", "KL divergence, top-1 agreement and perplexities of a model against its reference");
  add_model_flags(compare, *o);
  compare->add_option("--reference", o->reference, "The reference model directory (e.g. the f16 original)")->required();
  add_window_flags(compare, *o);
  compare->callback([o] { run_compare(*o); });

  auto* task = eval->add_subcommand("task", "Greedy accuracy on a task set (docs/EVAL.md gives the scoring)");
  add_model_flags(task, *o);
  task->add_option("--tasks", o->tasks, "Task set, JSON lines with prompt and answer")->required();
  task->callback([o] { run_task(*o); });

  auto* repetition = eval->add_subcommand("repetition", "Repeated 4-gram ratio of greedy generations");
  add_model_flags(repetition, *o);
  repetition->add_option("--prompts", o->prompts, "Prompts: one per line, or .jsonl with a prompt field")->required();
  repetition->add_option("--max-new-tokens,-n", o->max_new_tokens, "Tokens to generate per prompt")
      ->capture_default_str()
      ->check(at_least(1));
  repetition->callback([o] { run_repetition(*o); });
}

}  // namespace kiln::cli
