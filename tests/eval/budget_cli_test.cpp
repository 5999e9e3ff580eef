// End to end through the binary. Oracles: the Llama 3.1 8B worked example (KV 131,072 bytes per
// token, 0.5 GiB at 4,096 tokens, weights near 4.3 GiB in int4 g128), the checkpoint's own byte
// count for the "as stored" column, and a measured peak RSS that at least holds the KV cache.
#include <gtest/gtest.h>

#include <cstdlib>

#include "eval_fixtures.hpp"
#include "runtime/gpu/gpu_devices.hpp"

namespace kiln {
namespace {

using testing::run_kiln;

const std::string kConfig = (testing::test_data_dir() / "configs" / "llama-3.1-8b.json").string();

TEST(BudgetCli, Llama31_8bFromConfigAlone) {
  testing::TempDir tmp;
  const auto json = tmp.path() / "b.json";
  auto r = run_kiln({"budget", "--config", kConfig, "--weight-format", "int4", "--group-size", "128", "--context",
                     "4096", "--json", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("131072 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.500 GiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("zero points"), std::string::npos);
  const Json out = read_json_file(json);
  EXPECT_EQ(out["kv"]["bytes_per_token"], 131072);
  EXPECT_EQ(out["kv"]["bytes"], 512ull * 1024 * 1024);
  EXPECT_NEAR(out["weights"]["total"].get<double>() / (1024.0 * 1024 * 1024), 4.3, 0.1);
  EXPECT_EQ(out["weights"]["tensors"].size(), 2u + 32 * 9 + 1);
  EXPECT_EQ(out["weights"]["tensors"][0]["scheme"], "int8_asym");

  r = run_kiln({"budget", "--config", kConfig, "--context", "32768", "--kv-precision", "u8", "--json", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json u8 = read_json_file(json);
  EXPECT_EQ(u8["kv"]["bytes_per_token"], 81920);  // 128 codes + 4 · 8 bytes of scale/zero point per head vector
  EXPECT_EQ(u8["weight_format"], "f16");
}

// Oracle: the arithmetic written out: 90% of the device's memory is usable, the model fits when
// weights + KV do, and the KV room is what the weights leave, in whole tokens.
TEST(BudgetCli, DeviceChecksTheTotalAgainstTheGpusMemory) {
  ::setenv("KILN_OPENCL_CPU_DEVICES", "1", 1);  // PoCL's CPU device where there is no GPU
  ASSERT_FALSE(runtime::gpu::find_gpu_devices().empty())
      << "no OpenCL device: tools/install_dependencies.sh installs PoCL (pocl-opencl-icd)";
  testing::TempDir tmp;
  const auto json = tmp.path() / "b.json";
  for (const char* context : {"4096", "100000000"}) {
    const auto r = run_kiln({"budget", "--config", kConfig, "--weight-format", "int4", "--context", context, "--device",
                             "GPU", "--json", json.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json out = read_json_file(json);
    const Json& d = out["device"];
    const auto memory = d["memory_bytes"].get<std::uint64_t>(), usable = d["usable_bytes"].get<std::uint64_t>();
    const auto weights = out["weights"]["total"].get<std::uint64_t>(), kv = out["kv"]["bytes"].get<std::uint64_t>();
    EXPECT_EQ(d["name"], "GPU.0");
    EXPECT_EQ(usable, memory / 10 * 9);
    EXPECT_EQ(d["fits"].get<bool>(), weights + kv <= usable) << context;
    EXPECT_EQ(d["kv_tokens_with_room"].get<std::uint64_t>(), (usable - weights) / 131072);
  }
  EXPECT_FALSE(read_json_file(json)["device"]["fits"].get<bool>());  // 100M tokens: 12 TiB of KV
}

TEST(BudgetCli, ModelWithWeightsShowsTheStoredBytesAndMeasures) {
  const auto dir = testing::checkpoint_dir("llama2_tiny").string();  // bf16, sharded
  testing::TempDir tmp;
  const auto json = tmp.path() / "b.json";
  const auto r = run_kiln(
      {"budget", "--model", dir, "--weight-format", "bf16", "--context", "128", "--measure", "--json", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as stored"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak RSS"), std::string::npos) << r.out;
  const Json out = read_json_file(json);
  EXPECT_EQ(out["weights"]["total"], out["stored_weights"]["total"]);  // bf16 plan of a bf16 checkpoint
  const Json& m = out["measured"];
  EXPECT_EQ(m["prompt_tokens"], 128);
  EXPECT_GT(m["peak_rss_bytes"].get<std::uint64_t>(), m["kv_bytes"].get<std::uint64_t>());
  EXPECT_GE(m["peak_rss_bytes"].get<std::uint64_t>(), m["rss_before_load_bytes"].get<std::uint64_t>());
}

TEST(BudgetCli, ExportedIrIsComparedWithItsFileSizes) {
  // Oracle: kiln export wrote the IR with the same recipe, so the estimate must equal the bytes
  // of its tensors exactly, and model.bin is those bytes plus at most 63 bytes of 64-byte
  // alignment padding per section (codes, scales, zero points: three per tensor at most).
  testing::TempDir tmp;
  const auto ir = tmp.path() / "ir";
  auto r = run_kiln({"export", "--model", testing::checkpoint_dir("llama3_tiny").string(), "--weight-format", "int4",
                     "--group-size", "32", "--quiet", ir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = tmp.path() / "b.json";
  r = run_kiln({"budget", "--model", ir.string(), "--weight-format", "int4", "--group-size", "32", "--context", "64",
                "--measure", "--json", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model.bin on disk"), std::string::npos) << r.out;
  const Json out = read_json_file(json);
  EXPECT_EQ(out["weights"]["total"], out["stored_weights"]["total"]);
  EXPECT_GT(out["stored_weights"]["zero points"].get<std::uint64_t>(), 0u);  // int4 asym by default
  const auto file = out["ir_model_bin_bytes"].get<std::uint64_t>();
  const auto stored = out["stored_weights"]["total"].get<std::uint64_t>();
  EXPECT_GE(file, stored);
  EXPECT_LT(file, stored + 3 * 64 * out["weights"]["tensors"].size());
  EXPECT_EQ(out["measured"]["prompt_tokens"], 64);
}

TEST(BudgetCli, ConfigOnlyDirectoryAndErrors) {
  testing::TempDir tmp;
  std::filesystem::copy(testing::checkpoint_dir("llama3_tiny") / "config.json", tmp.path() / "config.json");
  auto r = run_kiln({"budget", "--model", tmp.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("as stored"), std::string::npos) << r.out;
  r = run_kiln({"budget", "--model", tmp.path().string(), "--measure"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--measure"), std::string::npos) << r.err;
  r = run_kiln({"budget", "--config", kConfig, "--weight-format", "int3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("int3"), std::string::npos) << r.err;
  r = run_kiln({"budget"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--model DIR"), std::string::npos) << r.err;
  r = run_kiln({"budget", "--config", "/nonexistent/config.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/config.json"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kiln
