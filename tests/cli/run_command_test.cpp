// End to end through the binary. Oracle: transformers' greedy continuation of the golden
// prompts (EOS ignored), decoded by HF tokenizers with special tokens skipped
// (tools/make_golden.py): `kiln run` must print exactly that. Those tests run on the REFERENCE
// device: the CPU default (f16 KV cache, bf16-rounded activations) drifts from transformers on
// these random-weight checkpoints, whose logits are nearly tied.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/thread_pool.hpp"
#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln {
namespace {

using testing::run_kiln;

Json golden_records(const std::string& name) {
  return read_json_file(testing::test_data_dir() / "checkpoints" / name / "golden.json")["records"];
}

TEST(RunCommand, GreedyOutputMatchesTransformers) {
  for (const std::string name :
       {"llama3_tiny", "llama2_tiny", "qwen2_tiny", "qwen3_tiny", "mistral_tiny", "phi3_tiny"}) {
    const auto dir = (testing::test_data_dir() / "checkpoints" / name).string();
    for (const Json& r : golden_records(name)) {
      const auto result = run_kiln({"run", "--model", dir, "--prompt", r["prompt"].get<std::string>(), "-n", "32",
                                    "--temperature", "0", "--ignore-eos", "--device", "REFERENCE"});
      ASSERT_EQ(result.exit_code, 0) << result.err;
      EXPECT_EQ(result.out, r["greedy_text"].get<std::string>() + "\n") << name << ": " << r["prompt"];
      EXPECT_NE(result.err.find("TTFT"), std::string::npos);
      EXPECT_NE(result.err.find("tokens/s"), std::string::npos);
    }
  }
}

TEST(RunCommand, PromptFromStdin) {
  const Json r = golden_records("llama3_tiny")[1];
  const auto dir = (testing::test_data_dir() / "checkpoints" / "llama3_tiny").string();
  const auto result = run_kiln({"run", "-m", dir, "-p", "-", "-n", "32", "--temperature", "0", "--device", "REFERENCE"},
                               r["prompt"].get<std::string>());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, r["greedy_text"].get<std::string>() + "\n");
}

TEST(RunCommand, SeededSamplingIsReproducible) {
  const auto dir = (testing::test_data_dir() / "checkpoints" / "llama3_tiny").string();
  const std::vector<std::string> args{"run", "-m",      dir,   "-p",      "Hello", "-n",     "24", "--temperature",
                                      "0.9", "--top-p", "0.9", "--top-k", "50",    "--seed", "7"};
  const auto a = run_kiln(args);
  const auto b = run_kiln(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(RunCommand, BadInputGivesClearErrors) {
  auto r = run_kiln({"run", "--model", "/nonexistent/model", "-p", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/model"), std::string::npos) << r.err;
  const auto dir = (testing::test_data_dir() / "checkpoints" / "llama3_tiny").string();
  r = run_kiln({"run", "--model", dir, "-p", "x", "--top-p", "1.5"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("top-p"), std::string::npos) << r.err;
  r = run_kiln({"run", "--model", dir, "-p", std::string(2000, 'x'), "--context", "64"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("context holds"), std::string::npos) << r.err;
}

// More threads than the CPUs the process may use still run, with a warning that says so; as many
// as it may use, with a draft model's pool too, give none.
TEST(RunCommand, MoreThreadsThanCpusIsAWarning) {
  const char* previous = std::getenv("KILN_LOG_LEVEL");
  const std::string restore = previous ? previous : "";
  ::setenv("KILN_LOG_LEVEL", "warn", 1);  // the child inherits it (ctest sets error)
  const int usable = static_cast<int>(allowed_cpus().size());
  const auto dir = (testing::test_data_dir() / "checkpoints" / "llama3_tiny").string();
  const auto run_with = [&](int threads, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {
        "run", "-m", dir, "-p", "Hello", "-n", "2", "--property", "INFERENCE_NUM_THREADS=" + std::to_string(threads)};
    args.insert(args.end(), more.begin(), more.end());
    return run_kiln(args);
  };
  const auto over = run_with(usable + 1);
  const auto fits = run_with(usable);
  // The draft's pool is built after the main pool pinned this thread to one CPU: the process
  // may still use every CPU.
  const auto with_draft = run_with(usable, {"--draft", dir});
  if (previous)
    ::setenv("KILN_LOG_LEVEL", restore.c_str(), 1);
  else
    ::unsetenv("KILN_LOG_LEVEL");
  ASSERT_EQ(over.exit_code, 0) << over.err;
  EXPECT_NE(over.err.find(fmt::format("INFERENCE_NUM_THREADS={} is more than the {} CPUs", usable + 1, usable)),
            std::string::npos)
      << over.err;
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_EQ(fits.err.find("is more than the"), std::string::npos) << fits.err;
  ASSERT_EQ(with_draft.exit_code, 0) << with_draft.err;
  EXPECT_EQ(with_draft.err.find("is more than the"), std::string::npos) << with_draft.err;
}

}  // namespace
}  // namespace kiln
