// Oracle: the committed golden checkpoints (one sharded, one single-file) and broken copies
// of them; each broken directory must fail naming the file and the problem.
#include "ir/hf_checkpoint.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "util/file_io.hpp"

namespace kiln::ir {
namespace {

namespace fs = std::filesystem;

fs::path checkpoint_dir(const std::string& name) { return testing::test_data_dir() / "checkpoints" / name; }

void copy_dir(const fs::path& from, const fs::path& to) { fs::copy(from, to, fs::copy_options::recursive); }

TEST(HfCheckpoint, OpensSingleFileAndSharded) {
  HfCheckpoint single(checkpoint_dir("llama3_tiny"));
  EXPECT_NE(single.find("model.embed_tokens.weight"), nullptr);
  EXPECT_EQ(single.find("lm_head.weight"), nullptr);  // tied
  EXPECT_FALSE(single.generation_config().empty());
  HfCheckpoint sharded(checkpoint_dir("llama2_tiny"));
  EXPECT_NE(sharded.find("lm_head.weight"), nullptr);
  EXPECT_EQ(sharded.find("model.layers.1.mlp.down_proj.weight")->dtype, ElementType::kBf16);
  EXPECT_EQ(sharded.names().size(), 2u + 2u * 9u + 1u);
}

TEST(HfCheckpoint, MissingDirectoryAndFiles) {
  testing::TempDir dir;
  EXPECT_KILN_ERROR(HfCheckpoint(dir.path() / "nope"), "not a directory");
  EXPECT_KILN_ERROR(HfCheckpoint{dir.path()}, "no config.json");
  fs::copy_file(checkpoint_dir("llama3_tiny") / "config.json", dir.path() / "config.json");
  EXPECT_KILN_ERROR(HfCheckpoint{dir.path()}, "no model.safetensors");
  write_file_atomic(dir.path() / "pytorch_model.bin", "x");
  EXPECT_KILN_ERROR(HfCheckpoint{dir.path()}, "pytorch_model.bin", "safetensors");
}

TEST(HfCheckpoint, TruncatedWeights) {
  testing::TempDir dir;
  copy_dir(checkpoint_dir("llama3_tiny"), dir.path() / "m");
  const fs::path weights = dir.path() / "m" / "model.safetensors";
  fs::resize_file(weights, fs::file_size(weights) - 100);
  EXPECT_KILN_ERROR(HfCheckpoint(dir.path() / "m"), "model.safetensors", "out of bounds");
}

TEST(HfCheckpoint, ShardMissing) {
  testing::TempDir dir;
  copy_dir(checkpoint_dir("llama2_tiny"), dir.path() / "m");
  fs::remove(dir.path() / "m" / "model-00002-of-00002.safetensors");
  EXPECT_KILN_ERROR(HfCheckpoint(dir.path() / "m"), "model-00002-of-00002.safetensors", "missing");
}

TEST(HfCheckpoint, IndexDisagreesWithShard) {
  testing::TempDir dir;
  copy_dir(checkpoint_dir("llama2_tiny"), dir.path() / "m");
  const fs::path index_path = dir.path() / "m" / "model.safetensors.index.json";
  Json index = read_json_file(index_path);
  // Point one tensor at the other shard.
  std::string& file = index["weight_map"]["model.norm.weight"].get_ref<std::string&>();
  file = file == "model-00001-of-00002.safetensors" ? "model-00002-of-00002.safetensors"
                                                    : "model-00001-of-00002.safetensors";
  write_file_atomic(index_path, index.dump());
  EXPECT_KILN_ERROR(HfCheckpoint(dir.path() / "m"), "model.norm.weight");
}

TEST(HfCheckpoint, IndexMayNotEscapeDirectory) {
  testing::TempDir dir;
  copy_dir(checkpoint_dir("llama2_tiny"), dir.path() / "m");
  const fs::path index_path = dir.path() / "m" / "model.safetensors.index.json";
  Json index = read_json_file(index_path);
  index["weight_map"]["model.norm.weight"] = "../evil.safetensors";
  write_file_atomic(index_path, index.dump());
  EXPECT_KILN_ERROR(HfCheckpoint(dir.path() / "m"), "weight_map", "not a file in this directory");
}

// Found by model_files_fuzz: a name past the system's limit made the existence check throw a
// std::filesystem error, which nothing caught.
TEST(HfCheckpoint, IndexNamingAShardTooLongToLookUpIsAnError) {
  testing::TempDir dir;
  copy_dir(checkpoint_dir("llama2_tiny"), dir.path() / "m");
  const fs::path index_path = dir.path() / "m" / "model.safetensors.index.json";
  Json index = read_json_file(index_path);
  index["weight_map"]["model.norm.weight"] = std::string(300, 'a') + ".safetensors";
  write_file_atomic(index_path, index.dump());
  EXPECT_KILN_ERROR(HfCheckpoint(dir.path() / "m"), "cannot be looked up", "File name too long");
}

TEST(HfCheckpoint, BadGenerationConfig) {
  testing::TempDir dir;
  copy_dir(checkpoint_dir("llama3_tiny"), dir.path() / "m");
  write_file_atomic(dir.path() / "m" / "generation_config.json", "[1, 2]");
  EXPECT_KILN_ERROR(HfCheckpoint(dir.path() / "m"), "generation_config.json", "must be a JSON object");
}

}  // namespace
}  // namespace kiln::ir
