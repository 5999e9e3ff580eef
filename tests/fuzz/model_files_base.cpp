#include "model_files_base.hpp"

#include <fmt/format.h>

#include "ir/hf_checkpoint.hpp"
#include "ir/ir_writer.hpp"
#include "ir/manifest.hpp"
#include "ir/tensor_convert.hpp"
#include "util/file_io.hpp"

namespace kiln::fuzz {
namespace {

namespace fs = std::filesystem;
using ir::IrTensorEntry;
using ir::TensorView;

// Seeds past this slow every mutation down more than their extra coverage is worth.
constexpr std::size_t kMaxSeedBytes = 64 * 1024;

void copy_files(const fs::path& from, const fs::path& to, std::initializer_list<const char*> names) {
  fs::create_directories(to);
  for (const char* name : names) fs::copy_file(from / name, to / name, fs::copy_options::overwrite_existing);
}

std::span<const std::uint8_t> bytes_of(const void* data, std::size_t size) {
  return {static_cast<const std::uint8_t*>(data), size};
}

// Writes `t` quantised as `scheme`, with its scale and (where the scheme has them) zero-point
// companions, as kiln export does.
void add_quantized(ir::IrWriter& writer, const TensorView& t, WeightScheme scheme, std::size_t group_size) {
  const auto out = static_cast<std::size_t>(t.shape[0]), in = static_cast<std::size_t>(t.shape[1]);
  const QuantizedMatrix q = quantize_weights(ir::to_f32(t), out, in, scheme, group_size, t.name);
  const auto groups = static_cast<std::int64_t>(num_groups(in, group_size));
  IrTensorEntry codes = IrTensorEntry::plain(t.name, ir::code_storage(scheme), t.shape);
  codes.quantization = ir::IrQuantization{scheme, static_cast<std::int64_t>(group_size), ir::scale_tensor_name(t.name),
                                          has_zero_points(scheme) ? ir::zero_point_tensor_name(t.name) : ""};
  writer.add_tensor(codes, q.data());
  writer.add_tensor(IrTensorEntry::plain(codes.quantization->scale, ElementType::kF16, {t.shape[0], groups}),
                    bytes_of(q.scales().data(), q.scales().size() * 2));
  if (has_zero_points(scheme)) {
    writer.add_tensor(
        IrTensorEntry::plain(codes.quantization->zero_point, ir::zero_point_storage(scheme), {t.shape[0], groups}),
        q.zero_points());
  }
}

// Part of the checkpoint as kiln's IR, so model.bin stays a few KB (the IR reader does not check
// the tensor set against the architecture: that is a later stage).
void write_ir(const ir::HfCheckpoint& checkpoint, const fs::path& dir) {
  fs::create_directories(dir);
  ir::IrWriter writer(dir);
  for (const char* name : {"model.layers.0.input_layernorm.weight", "model.norm.weight"}) {
    const TensorView& t = *checkpoint.find(name);
    writer.add_tensor(IrTensorEntry::plain(name, t.dtype, t.shape), t.bytes);
  }
  add_quantized(writer, *checkpoint.find("model.layers.0.self_attn.o_proj.weight"), WeightScheme::kInt4Asym, 32);
  add_quantized(writer, *checkpoint.find("model.layers.0.mlp.down_proj.weight"), WeightScheme::kInt8Sym, 128);
  writer.finish(checkpoint.config(), "kiln fuzz base");
  fs::copy_file(checkpoint.dir() / "generation_config.json", dir / "generation_config.json");
  ir::write_manifest(dir, Json{{"producer", "kiln fuzz base"}});
}

// The checkpoint's layer 0 and final norm only: still a valid model.safetensors for the
// checkpoint reader, in 41 KB instead of 231 KB.
std::string small_safetensors(const fs::path& full, const fs::path& scratch) {
  const ir::SafetensorsFile file(full);
  std::vector<ir::SafetensorsEntry> entries;
  for (const auto& [name, t] : file.tensors()) {
    if (name.starts_with("model.layers.0.") && !name.ends_with("gate_up_proj.weight")) {
      entries.push_back({name, t.dtype, t.shape, t.bytes});
    }
  }
  entries.push_back({"model.norm.weight", file.tensors().at("model.norm.weight").dtype,
                     file.tensors().at("model.norm.weight").shape, file.tensors().at("model.norm.weight").bytes});
  const fs::path path = scratch / "small.safetensors";
  ir::write_safetensors(path, entries, file.metadata());
  std::string bytes = read_file(path);
  fs::remove(path);
  return bytes;
}

}  // namespace

std::vector<ModelFile> make_model_files(const fs::path& scratch) {
  const fs::path fixtures = KILN_FUZZ_CHECKPOINTS_DIR;
  const fs::path hf = scratch / "hf", sharded = scratch / "hf-sharded", ir = scratch / "ir";
  copy_files(fixtures / "phi3_tiny", hf, {"config.json", "generation_config.json", "model.safetensors"});
  copy_files(fixtures / "llama2_tiny", sharded,
             {"config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
              "model-00002-of-00002.safetensors"});
  write_ir(ir::HfCheckpoint(hf), ir);

  std::vector<ModelFile> files;
  const auto add = [&](ModelKind kind, const fs::path& path) { files.push_back({kind, path, read_file(path), ""}); };
  add(ModelKind::kHfCheckpoint, hf / "config.json");
  add(ModelKind::kHfCheckpoint, hf / "generation_config.json");
  add(ModelKind::kHfCheckpoint, hf / "model.safetensors");
  files.back().seed = small_safetensors(hf / "model.safetensors", scratch);
  add(ModelKind::kHfCheckpoint, sharded / "model.safetensors.index.json");
  add(ModelKind::kHfCheckpoint, sharded / "model-00001-of-00002.safetensors");
  add(ModelKind::kHfCheckpoint, sharded / "model-00002-of-00002.safetensors");
  for (const char* name : {"model.json", "model.bin", "generation_config.json", "manifest.json"}) {
    add(ModelKind::kIr, ir / name);
  }
  return files;
}

void write_model_file_seeds(const std::vector<ModelFile>& files, const fs::path& dir) {
  fs::create_directories(dir);
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& contents = files[i].seed.empty() ? files[i].base : files[i].seed;
    if (contents.size() + 1 > kMaxSeedBytes) continue;
    const fs::path& path = files[i].path;
    const std::string name =
        fmt::format("{:02}-{}-{}", i, path.parent_path().filename().string(), path.filename().string());
    write_file_atomic(dir / name, std::string(1, static_cast<char>(i)) + contents);
  }
}

}  // namespace kiln::fuzz
