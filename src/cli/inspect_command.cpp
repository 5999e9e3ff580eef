// `kiln inspect DIR`: what a model is — architecture, hyper-parameters, every tensor (name,
// dtype, shape, bytes) and totals by role and dtype.
#include <fmt/format.h>

#include <map>

#include "cli/commands.hpp"
#include "ir/hf_checkpoint.hpp"
#include "models/tensor_specs.hpp"

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
  const char* scaling = c.rope_scaling.type == ir::RopeScalingType::kLlama3   ? "llama3"
                        : c.rope_scaling.type == ir::RopeScalingType::kLinear ? "linear"
                                                                               : "none";
  fmt::print("rope                theta {}, scaling {} (factor {})\n", c.rope_theta, scaling, c.rope_scaling.factor);
  fmt::print("rms norm eps        {}\n", c.rms_norm_eps);
  fmt::print("tied embeddings     {}\n", c.tie_word_embeddings ? "yes" : "no");
  fmt::print("biases              attention {}, mlp {}\n", c.attention_bias ? "yes" : "no", c.mlp_bias ? "yes" : "no");
}

void inspect(const std::filesystem::path& dir) {
  ir::HfCheckpoint ckpt(dir);
  print_config(ckpt.config());

  std::map<std::string, std::string> role_of;
  for (const auto& spec : models::tensor_specs(ckpt.config())) role_of[spec.name] = std::string(models::tensor_role_name(spec.role));

  fmt::print("\n{:<52} {:>5} {:>16} {:>12}\n", "tensor", "dtype", "shape", "bytes");
  std::map<std::string, std::uint64_t> bytes_by_role, bytes_by_dtype;
  std::uint64_t total_bytes = 0;
  std::int64_t total_params = 0;
  for (const std::string& name : ckpt.names()) {
    const ir::TensorView& t = *ckpt.find(name);
    fmt::print("{:<52} {:>5} {:>16} {:>12}\n", name, ir::dtype_name(t.dtype), ir::format_shape(t.shape), t.bytes.size());
    auto role = role_of.find(name);
    bytes_by_role[role == role_of.end() ? "unused" : role->second] += t.bytes.size();
    bytes_by_dtype[std::string(ir::dtype_name(t.dtype))] += t.bytes.size();
    total_bytes += t.bytes.size();
    total_params += t.num_elements();
  }
  fmt::print("\n{} tensors, {} parameters, {}\n", ckpt.names().size(), total_params, human_bytes(total_bytes));
  for (const auto& [role, bytes] : bytes_by_role) fmt::print("  {:<10} {}\n", role, human_bytes(bytes));
  for (const auto& [dtype, bytes] : bytes_by_dtype) fmt::print("  {:<10} {}\n", dtype, human_bytes(bytes));
}

}  // namespace

void register_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Print a model's architecture, hyper-parameters and tensor table");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("model", *dir, "Model directory (Hugging Face checkpoint)")->required();
  cmd->callback([dir] { inspect(*dir); });
}

}  // namespace kiln::cli
