// End to end through the binary. Oracle: the checkpoint's own config.json and safetensors
// header (tensor count and parameter total computed independently here from the JSON).
#include <gtest/gtest.h>

#include "ir/safetensors.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"

namespace kiln {
namespace {

TEST(InspectCommand, PrintsConfigTensorsAndTotals) {
  const auto dir = testing::test_data_dir() / "checkpoints" / "llama3_tiny";
  const auto r = testing::run_kiln({"inspect", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("LlamaForCausalLM"), std::string::npos);
  EXPECT_NE(r.out.find("attention heads     4 (KV heads 2, head dim 16)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scaling llama3"), std::string::npos);
  ir::SafetensorsFile f(dir / "model.safetensors");
  std::int64_t params = 0;
  for (const auto& [name, t] : f.tensors()) {
    params += t.num_elements();
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
  EXPECT_NE(r.out.find(fmt::format("{} tensors, {} parameters", f.tensors().size(), params)), std::string::npos)
      << r.out;
}

// Phi-3's fused projections are listed split, with the parameter total of the file unchanged;
// Mistral's window and Qwen's per-architecture layout are reported.
TEST(InspectCommand, ReportsArchitectureVariations) {
  const auto phi3 = testing::test_data_dir() / "checkpoints" / "phi3_tiny";
  auto r = testing::run_kiln({"inspect", phi3.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Phi3ForCausalLM (family phi3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scaling longrope"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rotary dims 8 of 16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model.layers.0.self_attn.k_proj.weight"), std::string::npos);
  EXPECT_EQ(r.out.find("qkv_proj.weight"), std::string::npos);
  ir::SafetensorsFile f(phi3 / "model.safetensors");
  std::int64_t params = 0;
  for (const auto& [name, t] : f.tensors()) params += t.num_elements();
  // Each layer's two fused tensors become five.
  EXPECT_NE(r.out.find(fmt::format("{} tensors, {} parameters", f.tensors().size() + 3 * 2, params)), std::string::npos)
      << r.out;
  r = testing::run_kiln({"inspect", (testing::test_data_dir() / "checkpoints" / "mistral_tiny").string()});
  EXPECT_NE(r.out.find("sliding window      8 positions in 2 of 2 layers"), std::string::npos) << r.out;
  r = testing::run_kiln({"inspect", (testing::test_data_dir() / "checkpoints" / "qwen2_tiny").string()});
  EXPECT_NE(r.out.find("biases              q/k/v yes, o no, mlp no"), std::string::npos) << r.out;
  r = testing::run_kiln({"inspect", (testing::test_data_dir() / "checkpoints" / "qwen3_tiny").string()});
  EXPECT_NE(r.out.find("q/k norm            per head (RMSNorm)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("head dim 32"), std::string::npos) << r.out;
}

// Oracle: golden.json, what llama.cpp's GGUFReader reads from the same file.
TEST(InspectCommand, ListsAGgufFilesMetadataAndTensors) {
  const auto dir = testing::test_data_dir() / "gguf";
  const auto r = testing::run_kiln({"inspect", (dir / "tiny.gguf").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json golden = read_json_file(dir / "golden.json");
  for (const Json& kv : golden["metadata"]) EXPECT_NE(r.out.find(kv["key"].get<std::string>()), std::string::npos);
  EXPECT_NE(r.out.find("general.architecture                     \"llama\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[5 strings: \"<s>\", \"</s>\", \"▁hello\", \"é\", ...]"), std::string::npos) << r.out;
  std::uint64_t params = 0;
  for (const Json& t : golden["tensors"]) {
    const auto dims = t["dims"].get<std::vector<std::uint64_t>>();
    std::uint64_t n = 1;
    for (std::uint64_t d : dims) n *= d;
    params += n;
    EXPECT_NE(r.out.find(t["name"].get<std::string>()), std::string::npos);
  }
  EXPECT_NE(r.out.find("q4_0                                                     Q4_0             [3, 256]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(fmt::format("{} tensors, {} parameters", golden["tensors"].size(), params)), std::string::npos)
      << r.out;
}

TEST(InspectCommand, UnknownArchitectureIsAnError) {
  testing::TempDir dir;
  std::filesystem::copy(testing::test_data_dir() / "checkpoints" / "llama3_tiny", dir.path() / "m");
  auto config = read_json_file(dir.path() / "m" / "config.json");
  config["architectures"] = {"MambaForCausalLM"};
  write_file_atomic(dir.path() / "m" / "config.json", config.dump());
  const auto r = testing::run_kiln({"inspect", (dir.path() / "m").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("MambaForCausalLM"), std::string::npos);
  EXPECT_NE(r.err.find("supported: LlamaForCausalLM"), std::string::npos);
}

}  // namespace
}  // namespace kiln
