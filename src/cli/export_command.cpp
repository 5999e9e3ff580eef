// `kiln export --model HF_DIR OUT_DIR [flags]`: a Hugging Face checkpoint to kiln's IR with
// optimum-cli's weight compression flags. `--format openvino` writes the same weights as an
// OpenVINO IR directory instead (export/openvino_ir_writer.hpp): the kiln export runs into a
// temporary directory beside OUT_DIR, which is then written out in OpenVINO's form; given a kiln
// IR directory as --model it is converted directly. Ctrl-C stops at the next tensor and removes
// the partial output; stdout gets a summary of what was written.
#include <fmt/format.h>
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/git_commit.hpp"
#include "cli/interrupt_guard.hpp"
#include "export/cpu_calibration_backend.hpp"
#include "export/exporter.hpp"
#include "export/openvino_ir_writer.hpp"
#include "ir/ir_model.hpp"
#include "util/error.hpp"
#include "util/path_probe.hpp"

namespace kiln::cli {
namespace {

struct ExportFlags {
  std::string model, out, format = "kiln", weight_format, sensitivity_metric, backup_precision, dataset;
  std::optional<std::int64_t> group_size, num_samples;
  std::optional<double> ratio;
  std::int64_t sample_tokens = 128;
  bool sym = false, all_layers = false, awq = false, scale_estimation = false, gptq = false, quiet = false;
};

exporter::ExportOptions to_options(const ExportFlags& f, std::vector<std::string> command_line,
                                   const std::atomic<bool>* cancel) {
  exporter::ExportOptions o;
  o.model_dir = f.model;
  o.out_dir = f.out;
  if (!f.weight_format.empty()) o.weight_format = exporter::parse_weight_format(f.weight_format);
  if (!f.sensitivity_metric.empty()) o.sensitivity_metric = exporter::parse_sensitivity_metric(f.sensitivity_metric);
  if (!f.backup_precision.empty()) o.backup_precision = exporter::parse_backup_precision(f.backup_precision);
  o.sym = f.sym;
  o.group_size = f.group_size;
  o.ratio = f.ratio;
  o.all_layers = f.all_layers;
  o.awq = f.awq;
  o.scale_estimation = f.scale_estimation;
  o.gptq = f.gptq;
  o.dataset = f.dataset;
  o.num_samples = f.num_samples;
  o.sample_tokens = f.sample_tokens;
  o.command_line = std::move(command_line);
  o.kiln_version = fmt::format("{} ({})", KILN_VERSION, KILN_GIT_COMMIT);
  o.show_progress = !f.quiet;
  o.cancel = cancel;
  return o;
}

// Removes a directory when it goes out of scope (the temporary kiln IR of an OpenVINO export).
struct RemoveOnExit {
  std::filesystem::path dir;
  ~RemoveOnExit() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

bool has_compression_flags(const ExportFlags& f) {
  return !f.weight_format.empty() || f.sym || f.group_size || f.ratio || f.all_layers || f.awq || f.scale_estimation ||
         f.gptq || !f.dataset.empty() || f.num_samples || !f.sensitivity_metric.empty() || !f.backup_precision.empty();
}

// Not quiet-able: without these files OpenVINO GenAI cannot load the directory.
void warn_tokenizer_skipped(const exporter::OpenVinoWriteResult& written, const std::string& out) {
  if (written.tokenizer_skipped.empty()) return;
  fmt::print(stderr,
             "warning: {}: openvino_tokenizer / openvino_detokenizer not written ({}); the decoder IR is. OpenVINO "
             "GenAI needs them: make them with openvino-tokenizers, convert_tokenizer {} --with-detokenizer -o {}\n",
             out, written.tokenizer_skipped, out, out);
}

void run_export(const ExportFlags& flags, const std::vector<std::string>& command_line) {
  namespace fs = std::filesystem;
  if (flags.format != "kiln" && flags.format != "openvino") {
    fail(ErrorKind::kInvalidInput, "--format {}: accepted formats are kiln and openvino", flags.format);
  }
  const bool openvino = flags.format == "openvino";
  if (openvino && path_exists(flags.out)) fail(ErrorKind::kInvalidInput, "{}: already exists", flags.out);
  if (openvino && ir::IrModel::is_ir_dir(flags.model)) {
    if (has_compression_flags(flags)) {
      fail(ErrorKind::kInvalidInput,
           "{}: is a kiln IR, written as it is: weight compression flags apply to a Hugging Face checkpoint",
           flags.model);
    }
    const ir::IrModel ir(flags.model);
    const exporter::OpenVinoWriteResult written =
        exporter::write_openvino_ir(ir, ir.config(), flags.out, {.files_from = flags.model});
    fmt::print("wrote {} as an OpenVINO IR to {}\n", flags.model, flags.out);
    warn_tokenizer_skipped(written, flags.out);
    return;
  }
  if (openvino && path_exists(fs::path(flags.model) / "config.json")) {
    exporter::check_openvino_export_supported(ir::load_model_config(fs::path(flags.model) / "config.json"));
  }
  const InterruptGuard interrupt;
  exporter::ExportOptions options = to_options(flags, command_line, interrupt.cancel());
  RemoveOnExit temporary;
  if (openvino) {
    const fs::path out = fs::absolute(flags.out).lexically_normal();
    temporary.dir = out.parent_path() / fmt::format(".{}.kiln-ir-{}", out.filename().string(), ::getpid());
    options.out_dir = temporary.dir;
  }
  const exporter::ExportResult r =
      exporter::export_model(options, exporter::cpu_calibration_backend(options.model_dir));
  exporter::OpenVinoWriteResult written;
  if (openvino) {
    const ir::IrModel ir(temporary.dir, {.verify_checksums = false});
    written = exporter::write_openvino_ir(ir, ir.config(), flags.out, {.files_from = temporary.dir});
  }
  std::string schemes;
  for (const auto& [scheme, count] : r.tensors_by_scheme)
    schemes += fmt::format("{}{} {}", schemes.empty() ? "" : ", ", count, scheme);
  fmt::print(
      "exported {} ({} parameters, weight format {}{}) to {}: model.bin {:.1f} MiB; tensors: {}; {:.1f} s, peak RSS "
      "{:.0f} MiB\n",
      options.model_dir.string(), r.num_parameters, optimum_weight_format_name(r.recipe.primary),
      r.recipe.weight_format_defaulted ? ", the default for this size" : "", openvino ? flags.out : r.out_dir.string(),
      double(r.model_bin_bytes) / (1 << 20), schemes, r.seconds, double(r.peak_rss_bytes) / (1 << 20));
  if (openvino) {
    fmt::print("written as an OpenVINO IR (openvino_model.xml / .bin{}) to {}\n",
               written.tokenizer_skipped.empty() ? ", openvino_tokenizer / openvino_detokenizer" : "", flags.out);
    warn_tokenizer_skipped(written, flags.out);
  }
}

}  // namespace

void register_export_command(CLI::App& app, int argc, char** argv) {
  auto f = std::make_shared<ExportFlags>();
  auto command_line = std::make_shared<std::vector<std::string>>(argv, argv + argc);
  auto* cmd = app.add_subcommand(
      "export", "Convert a Hugging Face checkpoint to kiln's IR or an OpenVINO IR, compressing the weights");
  cmd->add_option("--model,-m", f->model,
                  "Hugging Face checkpoint directory (with --format openvino also a kiln IR directory, converted as "
                  "it is)")
      ->required();
  cmd->add_option("output", f->out, "Output directory (must not exist)")->required();
  cmd->add_option("--format", f->format,
                  "kiln (default): kiln's IR; openvino: an OpenVINO IR (openvino_model.xml / .bin, NNCF's weight "
                  "layouts) that OpenVINO and OpenVINO GenAI load (Llama, Mistral, Qwen2, Qwen3)")
      ->capture_default_str();
  cmd->add_option("--weight-format", f->weight_format,
                  "fp32, fp16, bf16, int8, int4 or nf4 (default: int8 above 1B parameters, else fp32)");
  cmd->add_flag("--sym", f->sym, "Symmetric quantisation (int8/int4; default asymmetric)");
  cmd->add_option("--group-size", f->group_size,
                  "Weights per scale along the input (-1: per channel; int4/nf4 default 128)");
  cmd->add_option("--ratio", f->ratio,
                  "Fraction of the layers in int4/nf4, the rest in --backup-precision (default 1)");
  cmd->add_flag("--all-layers", f->all_layers, "Compress embedding and output head to the primary precision too");
  cmd->add_flag("--awq", f->awq, "Activation-aware scaling searched on calibration data (needs --dataset)");
  cmd->add_flag("--scale-estimation", f->scale_estimation, "Refine group scales on calibration data (needs --dataset)");
  cmd->add_flag("--gptq", f->gptq, "GPTQ error compensation (needs --dataset)");
  cmd->add_option("--dataset", f->dataset, "Calibration text: a UTF-8 file, or 'builtin'");
  cmd->add_option("--num-samples", f->num_samples, "Calibration samples (default 128)");
  cmd->add_option("--sample-tokens", f->sample_tokens, "Tokens per calibration sample (kiln's own; default 128)")
      ->capture_default_str();
  cmd->add_option("--sensitivity-metric", f->sensitivity_metric,
                  "How --ratio ranks layers: weight_quantization_error, hessian_input_activation, "
                  "mean_activation_variance, max_activation_variance, mean_activation_magnitude");
  cmd->add_option("--backup-precision", f->backup_precision, "int8_asym (default), int8_sym or none");
  cmd->add_flag("--quiet,-q", f->quiet, "No progress bar");
  cmd->callback([f, command_line] { run_export(*f, *command_line); });
}

}  // namespace kiln::cli
