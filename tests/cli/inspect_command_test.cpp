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
  EXPECT_NE(r.out.find(fmt::format("{} tensors, {} parameters", f.tensors().size(), params)), std::string::npos) << r.out;
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
