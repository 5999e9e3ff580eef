// `kiln budget`: the memory a model needs, before exporting or loading it: weight bytes by
// tensor class for an export choice, KV-cache bytes per token and for the context × sequences,
// and the total; from config.json alone when there are no weights. --measure loads the model,
// runs a prompt of the context's length and puts the measured peak RSS next to the estimate;
// --device GPU checks the total against a GPU's memory, as a GPU load will.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "eval/kv_budget.hpp"
#include "eval/memory_measure.hpp"
#include "eval/report_json.hpp"
#include "eval/weight_budget.hpp"
#include "genai/model_loader.hpp"
#include "ir/gguf_model.hpp"
#include "ir/hf_checkpoint.hpp"
#include "ir/ir_model.hpp"
#include "ir/openvino_model.hpp"
#include "runtime/gpu/gpu_devices.hpp"
#include "util/error.hpp"
#include "util/path_probe.hpp"

namespace kiln::cli {
namespace {

struct BudgetOptions {
  std::string model;
  std::string config;
  std::string weight_format = "fp16";
  bool sym = false;
  std::optional<std::int64_t> group_size;
  double ratio = 1.0;
  bool all_layers = false;
  std::int64_t context = 4096;
  std::string kv_precision = "f16";
  std::int64_t kv_group_size = 32;
  std::int64_t sequences = 1;
  bool measure = false;
  std::string device;  // a GPU to check the total against
  std::string json;
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(std::uint64_t bytes) { return fmt::format("{:.3f} GiB", static_cast<double>(bytes) / kGiB); }
std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}
// GiB from a quarter GiB up, MiB below, so the table stays readable for big and tiny models.
std::string human(std::uint64_t bytes) { return bytes >= (std::uint64_t{1} << 28) ? gib(bytes) : mib(bytes); }

bool has_weights(const std::filesystem::path& dir) {
  return path_exists(dir / "model.safetensors") || path_exists(dir / "model.safetensors.index.json");
}

// The checkpoint as stored, when there are weights to look at.
struct Source {
  ir::ModelConfig config;
  std::optional<eval::WeightBudget> stored;
  std::optional<std::uint64_t> ir_file_bytes;  // model.bin's size on disk, for an exported IR
};

Source open_source(const BudgetOptions& o) {
  if (o.model.empty() == o.config.empty()) fail("kiln budget needs exactly one of --model DIR and --config FILE");
  if (!o.config.empty()) return {ir::load_model_config(o.config), std::nullopt, std::nullopt};
  const std::filesystem::path dir(o.model);
  if (ir::GgufModel::is_gguf_file(dir)) {  // as imported with GGUF_REQUANTIZE's default
    const ir::GgufModel model(dir);
    return {model.config(), eval::measure_stored_weights(model.config(), model), std::nullopt};
  }
  if (ir::OpenVinoModel::is_openvino_dir(dir)) {
    const ir::OpenVinoModel model(dir);
    return {model.config(), eval::measure_stored_weights(model.config(), model), std::nullopt};
  }
  if (ir::IrModel::is_ir_dir(dir)) {
    const ir::IrModel model(dir, {.verify_checksums = false});  // sizes only; kiln verify checks hashes
    return {model.config(), eval::measure_stored_weights(model.config(), model),
            std::filesystem::file_size(dir / "model.bin")};
  }
  if (!has_weights(dir)) return {ir::load_model_config(dir / "config.json"), std::nullopt, std::nullopt};
  ir::HfCheckpoint checkpoint(dir);
  return {checkpoint.config(), eval::measure_stored_weights(checkpoint.config(), checkpoint), std::nullopt};
}

// The storage of a class's tensors, e.g. "int8_asym" or "int4_asym g128 + int8_asym".
std::string class_formats(const eval::WeightBudget& plan, eval::WeightClass c) {
  std::vector<std::string> formats;
  for (const eval::TensorPlan& t : plan.tensors) {
    if (eval::class_of(t.role) != c) continue;
    std::string f(weight_scheme_name(t.scheme));
    if (t.group_size > 0) f += t.group_size == t.in_features ? " per-channel" : fmt::format(" g{}", t.group_size);
    if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
  }
  return fmt::format("{}", fmt::join(formats, " + "));
}

void print_weights(const eval::WeightBudget& plan, const std::optional<eval::WeightBudget>& stored) {
  fmt::print("{:<14} {:>12}{}  {}\n", "weights", "estimate", stored ? fmt::format(" {:>12}", "as stored") : "",
             "stored as");
  for (std::size_t i = 0; i < eval::kNumWeightClasses; ++i) {
    const auto c = static_cast<eval::WeightClass>(i);
    fmt::print("  {:<12} {:>12}{}  {}\n", eval::weight_class_name(c), human(plan.bytes[i]),
               stored ? fmt::format(" {:>12}", human(stored->bytes[i])) : "", class_formats(plan, c));
  }
  fmt::print("  {:<12} {:>12}{}\n", "total", human(plan.total_bytes()),
             stored ? fmt::format(" {:>12}", human(stored->total_bytes())) : "");
  fmt::print("  {:<12} {:>12}\n", "parameters", fmt::format("{:.3f} B", static_cast<double>(plan.num_params) / 1e9));
}

// Loads the model, fills the KV cache to the context and reports peak RSS against what the
// loaded backend should hold: the weights as stored (mapped) plus its own KV cache.
Json measure(const BudgetOptions& o, const eval::WeightBudget& stored) {
  const std::uint64_t rss_before = eval::current_rss_bytes().value_or(0);
  genai::LoadedModel m = genai::load_model(o.model, {.context_tokens = o.context, .max_sequences = o.sequences});
  const models::KvCacheLayout& kv = m.model->kv_cache_layout();
  const std::int64_t prompt = std::min(o.context, kv.num_tokens());
  eval::run_synthetic_prefill(*m.model, std::min(prompt, m.model->config().max_position_embeddings));
  const std::uint64_t peak = eval::peak_rss_bytes().value_or(0);
  const eval::KvFormat backend_kv{.precision = kv.precision, .group_size = kv.u8_group_size};
  const std::uint64_t kv_bytes =
      eval::kv_bytes_per_token(m.model->config(), backend_kv) * static_cast<std::uint64_t>(kv.num_tokens());
  const std::uint64_t expected = stored.total_bytes() + kv_bytes;
  fmt::print("\nmeasured (this backend: weights as stored, KV cache in {}, {} tokens allocated)\n",
             kv_precision_name(kv.precision), kv.num_tokens());
  fmt::print("  {:<22} {:>16}\n", "RSS before loading", human(rss_before));
  fmt::print("  {:<22} {:>16}\n", "weights + KV estimate", human(expected));
  fmt::print("  {:<22} {:>16}\n", "peak RSS", human(peak));
  fmt::print("  {:<22} {:>16}\n", "peak - before", human(peak - std::min(peak, rss_before)));
  return {{"rss_before_load_bytes", rss_before},
          {"peak_rss_bytes", peak},
          {"prompt_tokens", prompt},
          {"kv_precision", kv_precision_name(kv.precision)},
          {"kv_tokens_allocated", kv.num_tokens()},
          {"kv_bytes", kv_bytes},
          {"estimate_bytes", expected}};
}

// Whether weights + KV fit the GPU's usable memory, and how many KV tokens the weights leave room for.
Json check_gpu(const std::string& device, std::uint64_t weight_bytes, std::uint64_t kv_total,
               std::uint64_t kv_per_token) {
  const runtime::gpu::GpuDeviceInfo info = runtime::gpu::select_gpu_device(device).info;
  const std::uint64_t usable = runtime::gpu::usable_memory_bytes(info);
  const bool fits = weight_bytes + kv_total <= usable;
  const std::uint64_t room_tokens = weight_bytes < usable ? (usable - weight_bytes) / kv_per_token : 0;
  fmt::print("\n{} ({}): {} of device memory, {} usable (90%)\n", info.name, info.full_name,
             human(info.global_memory_bytes), human(usable));
  fmt::print("  {:<22} {:>16}\n", "fits", fits ? "yes" : "no");
  fmt::print("  {:<22} {:>16}\n", "KV tokens with room", room_tokens);
  return {{"name", info.name},
          {"full_name", info.full_name},
          {"memory_bytes", info.global_memory_bytes},
          {"usable_bytes", usable},
          {"fits", fits},
          {"kv_tokens_with_room", room_tokens}};
}

void budget(const BudgetOptions& o) {
  JsonOutput json(o.json);  // before --measure's load: an unwritable path fails now
  const Source source = open_source(o);
  eval::CompressionChoice format{.scheme = eval::parse_weight_format_name(o.weight_format, o.sym),
                                 .group_size = o.group_size,
                                 .ratio = o.ratio,
                                 .all_layers = o.all_layers};
  const eval::WeightBudget plan = eval::plan_weights(source.config, format);
  const eval::KvFormat kv{.precision = eval::parse_kv_precision_flag(o.kv_precision), .group_size = o.kv_group_size};
  if (o.context <= 0 || o.sequences <= 0) fail("--context and --sequences must be positive");
  const std::uint64_t kv_per_token = eval::kv_bytes_per_token(source.config, kv);
  const std::uint64_t kv_total =
      kv_per_token * static_cast<std::uint64_t>(o.context) * static_cast<std::uint64_t>(o.sequences);

  print_weights(plan, source.stored);
  fmt::print("\nKV cache ({}{})\n", o.kv_precision,
             kv.precision == ElementType::kU8 ? fmt::format(", group {}", kv.group_size) : "");
  fmt::print("  {:<22} {:>16}\n", "per token", fmt::format("{} B", kv_per_token));
  fmt::print("  {:<22} {:>16}\n", fmt::format("{} tokens x {} seq", o.context, o.sequences), human(kv_total));
  fmt::print("\n{:<24} {:>16}\n", "total (weights + KV)", human(plan.total_bytes() + kv_total));

  Json j = {{"weight_format", weight_scheme_name(format.scheme)},
            {"group_size", format.group_size.value_or(0)},
            {"ratio", format.ratio},
            {"share_4bit", plan.share_4bit},
            {"all_layers", format.all_layers},
            {"weights", eval::to_json(plan, /*with_tensors=*/true)},
            {"kv",
             {{"precision", o.kv_precision},
              {"group_size", kv.group_size},
              {"bytes_per_token", kv_per_token},
              {"context", o.context},
              {"sequences", o.sequences},
              {"bytes", kv_total}}},
            {"total_bytes", plan.total_bytes() + kv_total}};
  if (source.stored) j["stored_weights"] = eval::to_json(*source.stored, /*with_tensors=*/false);
  if (source.ir_file_bytes) {
    // model.bin is the tensors plus 64-byte alignment padding (docs/FORMAT.md).
    fmt::print("\n{:<24} {:>16} (tensors as stored {}, estimate {})\n", "model.bin on disk",
               human(*source.ir_file_bytes), human(source.stored->total_bytes()), human(plan.total_bytes()));
    j["ir_model_bin_bytes"] = *source.ir_file_bytes;
  }
  if (!o.device.empty()) {
    j["device"] = check_gpu(o.device, plan.total_bytes(), kv_total, kv_per_token);
  }
  if (o.measure) {
    if (!source.stored)
      fail("--measure needs --model with weights (a checkpoint with model.safetensors or an exported IR)");
    j["measured"] = measure(o, *source.stored);
  }
  json.write(j);
}

}  // namespace

void register_budget_command(CLI::App& app) {
  auto o = std::make_shared<BudgetOptions>();
  auto* cmd = app.add_subcommand("budget", "Estimate weight and KV-cache memory for an export choice and a context");
  auto* model =
      cmd->add_option("--model,-m", o->model, "Model directory (weights optional: config.json suffices) or GGUF file");
  cmd->add_option("--config", o->config, "A Hugging Face config.json")->excludes(model);
  cmd->add_option("--weight-format", o->weight_format, "int4, int8, fp16, bf16, fp32, nf4, or a scheme (int4_sym, ...)")
      ->capture_default_str();
  cmd->add_flag("--sym", o->sym, "Symmetric int4 / int8 (no zero points)");
  cmd->add_option("--group-size", o->group_size, "Quantisation group size (-1: per channel; int4 default 128)");
  cmd->add_option("--ratio", o->ratio, "Share of decoder-layer weights in 4 bits; the rest int8")
      ->capture_default_str();
  cmd->add_flag("--all-layers", o->all_layers,
                "Compress embedding and head like the rest (else int8 for 4-bit formats)");
  cmd->add_option("--context", o->context, "Tokens of context per sequence")->capture_default_str();
  cmd->add_option("--kv-precision", o->kv_precision, "KV cache precision: f32, f16, bf16, u8")->capture_default_str();
  cmd->add_option("--kv-group-size", o->kv_group_size, "u8 KV cache: values per scale and zero point")
      ->capture_default_str();
  cmd->add_option("--sequences", o->sequences, "Sequences held in the KV cache at full context")->capture_default_str();
  cmd->add_flag("--measure", o->measure, "Load the model, run a prompt of --context tokens, report peak RSS");
  cmd->add_option("--device", o->device, "GPU or GPU.<n>: check the total against that device's memory");
  cmd->add_option("--json", o->json, "Also write the results as JSON to this file");
  cmd->callback([o] { budget(*o); });
}

}  // namespace kiln::cli
