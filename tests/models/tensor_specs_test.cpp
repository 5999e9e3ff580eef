// Oracle: purposely broken copies of a golden checkpoint. Each validation problem must be
// reported with the tensor's name and what was expected.
#include "models/tensor_specs.hpp"

#include <gtest/gtest.h>

#include "golden_checkpoint.hpp"

namespace kiln::models {
namespace {

// Rewrites the llama3_tiny checkpoint into `dir` after `edit` changes its tensor list.
void write_edited_checkpoint(const std::filesystem::path& dir,
                             const std::function<void(std::vector<ir::SafetensorsEntry>&)>& edit) {
  const auto src = testing::golden_checkpoint_dir("llama3_tiny");
  std::filesystem::copy_file(src / "config.json", dir / "config.json");
  ir::SafetensorsFile original(src / "model.safetensors");
  std::vector<ir::SafetensorsEntry> entries;
  for (const auto& [name, t] : original.tensors()) entries.push_back({name, t.dtype, t.shape, t.bytes});
  edit(entries);
  ir::write_safetensors(dir / "model.safetensors", entries);
}

ir::SafetensorsEntry& entry(std::vector<ir::SafetensorsEntry>& entries, const std::string& name) {
  for (auto& e : entries) {
    if (e.name == name) return e;
  }
  throw std::runtime_error("no tensor " + name);
}

TEST(ValidateTensors, GoldenCheckpointsPass) {
  for (const auto& name : testing::golden_checkpoint_names()) {
    ir::HfCheckpoint ckpt(testing::golden_checkpoint_dir(name));
    EXPECT_NO_THROW(validate_tensors(ckpt.config(), ckpt)) << name;
  }
}

TEST(ValidateTensors, MissingTensor) {
  testing::TempDir dir;
  write_edited_checkpoint(dir.path(), [](auto& entries) {
    std::erase_if(entries, [](const auto& e) { return e.name == "model.layers.1.mlp.up_proj.weight"; });
  });
  ir::HfCheckpoint ckpt(dir.path());
  const std::string origin = dir.path().string();
  EXPECT_KILN_ERROR(validate_tensors(ckpt.config(), ckpt), "missing tensor 'model.layers.1.mlp.up_proj.weight'",
                    "[128, 64]", origin.c_str());
}

TEST(ValidateTensors, ExtraTensor) {
  testing::TempDir dir;
  std::vector<float> junk(4);
  write_edited_checkpoint(dir.path(), [&](auto& entries) {
    entries.push_back({"model.layers.0.mystery.weight",
                       ElementType::kF32,
                       {4},
                       {reinterpret_cast<const std::uint8_t*>(junk.data()), 16}});
  });
  ir::HfCheckpoint ckpt(dir.path());
  EXPECT_KILN_ERROR(validate_tensors(ckpt.config(), ckpt), "unexpected tensor 'model.layers.0.mystery.weight'");
}

TEST(ValidateTensors, ShapeMismatch) {
  testing::TempDir dir;
  write_edited_checkpoint(dir.path(), [](auto& entries) {
    auto& e = entry(entries, "model.layers.0.self_attn.k_proj.weight");
    e.shape = {64, 32};  // same bytes, transposed shape
  });
  ir::HfCheckpoint ckpt(dir.path());
  EXPECT_KILN_ERROR(validate_tensors(ckpt.config(), ckpt),
                    "'model.layers.0.self_attn.k_proj.weight' has shape [64, 32]", "implies [32, 64]");
}

TEST(ValidateTensors, DtypeMismatch) {
  testing::TempDir dir;
  write_edited_checkpoint(dir.path(), [](auto& entries) {
    auto& e = entry(entries, "model.norm.weight");
    e.dtype = ElementType::kI32;  // 64 × 4 bytes either way
  });
  ir::HfCheckpoint ckpt(dir.path());
  EXPECT_KILN_ERROR(validate_tensors(ckpt.config(), ckpt), "'model.norm.weight' has dtype I32", "F32, F16, BF16");
}

TEST(ValidateTensors, TiedHeadCopyIsIgnored) {
  testing::TempDir dir;
  write_edited_checkpoint(dir.path(), [](auto& entries) {
    auto copy = entry(entries, "model.embed_tokens.weight");
    copy.name = "lm_head.weight";
    entries.push_back(copy);
  });
  ir::HfCheckpoint ckpt(dir.path());
  EXPECT_NO_THROW(validate_tensors(ckpt.config(), ckpt));
}

}  // namespace
}  // namespace kiln::models
