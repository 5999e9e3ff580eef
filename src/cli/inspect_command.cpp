// `kiln inspect DIR`: what a model (kiln IR or Hugging Face checkpoint) is — architecture, hyper-parameters, every
// tensor (name, dtype, shape, bytes) and totals by role and dtype. `kiln inspect FILE.gguf`: a GGUF file's
// metadata and tensor table (kiln does not run GGUF models yet).
#include <fmt/format.h>

#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "ir/gguf_file.hpp"
#include "ir/hf_checkpoint.hpp"
#include "ir/ir_model.hpp"
#include "ir/openvino_model.hpp"
#include "models/tensor_specs.hpp"
#include "util/path_probe.hpp"

namespace kiln::cli {
namespace {

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", v, units[u]);
}

void print_config(const ir::ModelConfig& c) {
  fmt::print("architecture        {} (family {})\n", c.architecture, c.family);
  fmt::print("hidden size         {}\n", c.hidden_size);
  fmt::print("layers              {}\n", c.num_layers);
  fmt::print("attention heads     {} (KV heads {}, head dim {})\n", c.num_heads, c.num_kv_heads, c.head_dim);
  fmt::print("intermediate size   {}\n", c.intermediate_size);
  fmt::print("vocabulary          {}\n", c.vocab_size);
  fmt::print("context             {} positions\n", c.max_position_embeddings);
  const char* scaling = c.rope_scaling.type == ir::RopeScalingType::kLlama3     ? "llama3"
                        : c.rope_scaling.type == ir::RopeScalingType::kLinear   ? "linear"
                        : c.rope_scaling.type == ir::RopeScalingType::kLongRope ? "longrope"
                                                                                : "none";
  fmt::print("rope                theta {}, scaling {} (factor {}), rotary dims {} of {}\n", c.rope_theta, scaling,
             c.rope_scaling.factor, c.rotary_dim, c.head_dim);
  if (c.rope_scaling.type == ir::RopeScalingType::kLongRope) {
    fmt::print("longrope            original context {}, attention factor {:.6g} (long factors not implemented)\n",
               c.rope_scaling.original_max_position_embeddings, c.rope_scaling.attention_factor);
  }
  fmt::print("rms norm eps        {}\n", c.rms_norm_eps);
  fmt::print("tied embeddings     {}\n", c.tie_word_embeddings ? "yes" : "no");
  fmt::print("biases              q/k/v {}, o {}, mlp {}\n", c.attention_bias ? "yes" : "no",
             c.attention_output_bias ? "yes" : "no", c.mlp_bias ? "yes" : "no");
  fmt::print("q/k norm            {}\n", c.qk_norm ? "per head (RMSNorm)" : "no");
  if (c.fused_projections) fmt::print("fused projections   qkv_proj, gate_up_proj (split on load)\n");
  std::int64_t windowed = 0;
  for (std::int64_t l = 0; l < c.num_layers; ++l) windowed += c.window_of_layer(l) > 0;
  if (c.sliding_window > 0) {
    fmt::print("sliding window      {} positions in {} of {} layers\n", c.sliding_window, windowed, c.num_layers);
  } else {
    fmt::print("sliding window      none\n");
  }
}

// "F32", or for a quantised IR weight its scheme and group size ("int4_sym g128").
std::string storage_label(const ir::TensorView& t) {
  if (!t.is_quantized()) return std::string(element_type_name(t.dtype));
  return fmt::format("{} g{}", weight_scheme_name(t.quantization->scheme), t.quantization->group_size);
}

// Stored bytes, scales and zero points included.
std::uint64_t stored_bytes(const ir::TensorView& t) {
  return t.bytes.size() + (t.is_quantized() ? t.quantization->scales.size() + t.quantization->zero_points.size() : 0);
}

// A metadata value on one line: scalars as JSON, arrays by their length and first items (a
// tokenizer's vocabulary is an array of 100k strings).
std::string metadata_line(const Json& value) {
  if (!value.is_array()) return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  const char* kind = value.empty() ? "items" : value[0].is_string() ? "strings" : "numbers";
  std::string head;
  for (std::size_t i = 0; i < value.size() && i < 4; ++i) {
    head += (i ? ", " : "") + value[i].dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return fmt::format("[{} {}: {}{}]", value.size(), kind, head, value.size() > 4 ? ", ..." : "");
}

void inspect_gguf(const std::filesystem::path& path) {
  const ir::GgufFile file(path);
  fmt::print("GGUF                version {}, {} keys, {} tensors, alignment {}\n", file.version(),
             file.metadata().size(), file.tensors().size(), file.alignment());
  for (const auto& [key, value] : file.metadata()) fmt::print("{:<40} {}\n", key, metadata_line(value));
  fmt::print("\n{:<52} {:>8} {:>20} {:>12}\n", "tensor", "type", "shape", "bytes");
  std::map<std::string, std::uint64_t> bytes_by_type;
  std::uint64_t total_bytes = 0, total_params = 0;
  for (const ir::GgufTensor& t : file.tensors()) {
    const std::string type = *ir::ggml_type_name(static_cast<std::uint32_t>(t.type));
    std::string shape = "[";  // numpy's order: the reverse of ggml's
    for (std::size_t i = t.dims.size(); i-- > 0;) shape += fmt::format("{}{}", t.dims[i], i ? ", " : "]");
    fmt::print("{:<52} {:>8} {:>20} {:>12}\n", t.name, type, shape, t.bytes.size());
    bytes_by_type[type] += t.bytes.size();
    total_bytes += t.bytes.size();
    total_params += t.elements();
  }
  fmt::print("\n{} tensors, {} parameters, {}\n", file.tensors().size(), total_params, human_bytes(total_bytes));
  for (const auto& [type, bytes] : bytes_by_type) fmt::print("  {:<10} {}\n", type, human_bytes(bytes));
}

void inspect(const std::filesystem::path& dir) {
  if (is_file_path(dir) && dir.extension() == ".gguf") {
    inspect_gguf(dir);
    return;
  }
  // kiln's IR (model.json), an OpenVINO IR or a Hugging Face checkpoint: the same report.
  std::unique_ptr<ir::TensorSource> source;
  ir::ModelConfig config;
  if (ir::IrModel::is_ir_dir(dir)) {
    auto model = std::make_unique<ir::IrModel>(dir);
    config = model->config();
    fmt::print("kiln IR             format_version {}, written by {}\n", ir::kIrFormatVersion, model->producer());
    source = std::move(model);
  } else if (ir::OpenVinoModel::is_openvino_dir(dir)) {
    auto model = std::make_unique<ir::OpenVinoModel>(dir);
    config = model->config();
    fmt::print("OpenVINO IR         openvino_model.xml (weights read through its decompression subgraphs)\n");
    source = std::move(model);
  } else {
    auto ckpt = std::make_unique<ir::HfCheckpoint>(dir);
    config = ckpt->config();
    source = std::move(ckpt);
  }
  print_config(config);

  std::map<std::string, std::string> role_of;
  for (const auto& spec : models::tensor_specs(config))
    role_of[spec.name] = std::string(models::tensor_role_name(spec.role));

  fmt::print("\n{:<52} {:>15} {:>16} {:>12}\n", "tensor", "dtype", "shape", "bytes");
  std::map<std::string, std::uint64_t> bytes_by_role, bytes_by_dtype;
  std::uint64_t total_bytes = 0;
  std::int64_t total_params = 0;
  const std::vector<std::string> names = source->names();
  for (const std::string& name : names) {
    const ir::TensorView& t = *source->find(name);
    const std::uint64_t bytes = stored_bytes(t);
    const std::string label = storage_label(t);
    fmt::print("{:<52} {:>15} {:>16} {:>12}\n", name, label, ir::format_shape(t.shape), bytes);
    auto role = role_of.find(name);
    bytes_by_role[role == role_of.end() ? "unused" : role->second] += bytes;
    bytes_by_dtype[t.is_quantized() ? std::string(weight_scheme_name(t.quantization->scheme)) : label] += bytes;
    total_bytes += bytes;
    total_params += t.num_elements();
  }
  fmt::print("\n{} tensors, {} parameters, {}\n", names.size(), total_params, human_bytes(total_bytes));
  for (const auto& [role, bytes] : bytes_by_role) fmt::print("  {:<10} {}\n", role, human_bytes(bytes));
  for (const auto& [dtype, bytes] : bytes_by_dtype) fmt::print("  {:<10} {}\n", dtype, human_bytes(bytes));
}

}  // namespace

void register_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Print a model's architecture, hyper-parameters and tensor table");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("model", *dir, "Model directory (kiln IR or Hugging Face checkpoint), or a .gguf file")->required();
  cmd->callback([dir] { inspect(*dir); });
}

}  // namespace kiln::cli
