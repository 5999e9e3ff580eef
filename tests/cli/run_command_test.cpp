// End to end through the binary. Oracle: transformers' greedy continuation of the golden
// prompts (EOS ignored), decoded by HF tokenizers with special tokens skipped
// (tools/make_golden.py): `kiln run` must print exactly that. Those tests run on the REFERENCE
// device: the CPU default (f16 KV cache, bf16-rounded activations) drifts from transformers on
// these random-weight checkpoints, whose logits are nearly tied.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/thread_pool.hpp"
#include "support/test_support.hpp"
#include "util/file_io.hpp"
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

// `kiln tokenize` gives `prompt_ids`, and greedy `kiln run` on the REFERENCE device prints what
// `kiln detokenize --skip-special` makes of `greedy_ids` (16 of them).
void expect_tokenizes_and_generates(const std::string& model, const std::string& prompt, const Json& prompt_ids,
                                    const Json& greedy_ids) {
  const auto ids = run_kiln({"tokenize", "--model", model, prompt});
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  EXPECT_EQ(Json::parse(ids.out), prompt_ids);

  std::vector<std::string> detokenize = {"detokenize", "--model", model, "--skip-special"};
  for (const Json& id : greedy_ids) detokenize.push_back(std::to_string(id.get<int>()));
  const auto expected = run_kiln(detokenize);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  const auto result = run_kiln({"run", "--model", model, "--prompt", prompt, "-n", "16", "--temperature", "0",
                                "--ignore-eos", "--device", "REFERENCE"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, expected.out);
}

// An OpenVINO IR directory runs like any model: tokenized by its tokenizer.json as OpenVINO
// GenAI tokenized it, and generating GenAI's greedy tokens (tests/data/openvino/models).
TEST(RunCommand, RunsAnOpenVinoIr) {
  const auto dir = testing::test_data_dir() / "openvino" / "models";
  const Json golden = read_json_file(dir / "golden.json")["llama3_tiny-int4-sym-g32"];
  const std::string model = (dir / "llama3_tiny-int4-sym-g32").string();

  expect_tokenizes_and_generates(model, golden["prompt"], golden["prompt_ids"], golden["genai_greedy_ids"]);

  const testing::TempDir out;
  const auto exported = run_kiln({"export", "--model", model, (out.path() / "x").string()});
  EXPECT_NE(exported.exit_code, 0);
  EXPECT_NE(exported.err.find("an OpenVINO IR runs as it is"), std::string::npos) << exported.err;
  const auto budget = run_kiln({"budget", "--model", model, "--context", "64"});
  ASSERT_EQ(budget.exit_code, 0) << budget.err;
  EXPECT_NE(budget.out.find("as stored"), std::string::npos) << budget.out;
}

// optimum-cli's openvino_tokenizer.xml is an OpenVINO model kiln does not run: without the
// Hugging Face tokenizer files beside it, the error says which files are needed.
TEST(RunCommand, OpenVinoIrWithoutTokenizerJsonSaysWhatIsNeeded) {
  const testing::TempDir tmp;
  const auto dir = tmp.path() / "ir";
  std::filesystem::copy(testing::test_data_dir() / "openvino" / "models" / "llama3_tiny-fp16", dir);
  std::filesystem::remove(dir / "tokenizer.json");
  write_file_atomic(dir / "openvino_tokenizer.xml", "<net/>");
  const auto result = run_kiln({"run", "--model", dir.string(), "--prompt", "hi", "-n", "2"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("has openvino_tokenizer.xml but no tokenizer.json"), std::string::npos) << result.err;
}

// A GGUF file stands where a model directory does. Oracles: llama.cpp's tokenization of the
// prompt, and transformers' greedy continuation on the weights the file defines
// (tests/data/gguf/models/golden.json).
TEST(RunCommand, RunsAGgufFile) {
  const auto dir = testing::test_data_dir() / "gguf" / "models";
  const Json golden = read_json_file(dir / "golden.json")["llama3_tiny.f16.gguf"];
  const std::string model = (dir / "llama3_tiny.f16.gguf").string();

  expect_tokenizes_and_generates(model, golden["prompt"], golden["prompt_ids"], golden["dequantized_greedy_ids"]);
  const auto result = run_kiln({"run", "--model", model, "--prompt", golden["prompt"].get<std::string>(), "-n", "4"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err.find("re-quantised"), std::string::npos) << "f16 is kept as it is";

  setenv("KILN_LOG_LEVEL", "warn", 1);  // the re-quantisation is said at warn (ctest runs tests at error)
  const auto q4_1 = run_kiln({"run", "--model", (dir / "llama3_tiny.q4_1.gguf").string(), "--prompt", "The cat", "-n",
                              "4", "--property", "GGUF_REQUANTIZE=int4_asym"});
  setenv("KILN_LOG_LEVEL", "error", 1);
  ASSERT_EQ(q4_1.exit_code, 0) << q4_1.err;
  EXPECT_NE(q4_1.err.find("Q4_1 (14 tensors) have no exact kiln format: decoded and re-quantised to int4_asym"),
            std::string::npos)
      << q4_1.err;

  const testing::TempDir out;
  const auto exported = run_kiln({"export", "--model", model, (out.path() / "x").string()});
  EXPECT_NE(exported.exit_code, 0);
  EXPECT_NE(exported.err.find("a GGUF file runs as it is"), std::string::npos) << exported.err;
  const auto budget = run_kiln({"budget", "--model", model, "--context", "64"});
  ASSERT_EQ(budget.exit_code, 0) << budget.err;
  EXPECT_NE(budget.out.find("as stored"), std::string::npos) << budget.out;
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
  // A path the system refuses to look up is bad input too, not an internal error.
  const std::string too_long = "/tmp/" + std::string(300, 'm');
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", "--model", too_long, "-p", "x"},
                                               {"inspect", too_long},
                                               {"budget", "--model", too_long}}) {
    r = run_kiln(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("File name too long"), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.find("internal"), std::string::npos) << args[0] << ": " << r.err;
  }
  const auto dir = (testing::test_data_dir() / "checkpoints" / "llama3_tiny").string();
  r = run_kiln({"run", "--model", dir, "-p", "x", "--top-p", "1.5"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("top-p"), std::string::npos) << r.err;
  r = run_kiln({"run", "--model", dir, "-p", std::string(2000, 'x'), "--context", "64"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("context holds"), std::string::npos) << r.err;
  r = run_kiln({"run", "--model", dir, "-p", "-"}, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--prompt -: standard input was empty"), std::string::npos) << r.err;
  r = run_kiln({"run", "--model", dir, "-p", "-"}, "Hel\xff\xfelo");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--prompt (standard input): not UTF-8 text: byte 3 (0xff)"), std::string::npos) << r.err;
  r = run_kiln({"tokenize", "--model", dir, "caf\xc3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("text: not UTF-8 text: byte 3 (0xc3)"), std::string::npos) << r.err;
  // Far more threads than CPUs is refused before any starts (it used to end in std::terminate).
  r = run_kiln({"run", "--model", dir, "-p", "x", "--property", "INFERENCE_NUM_THREADS=100000"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("INFERENCE_NUM_THREADS=100000 is far more than the"), std::string::npos) << r.err;
  // Option errors exit 1 like every other bad input; an integer past 64 bits is one.
  r = run_kiln({"run", "--model", dir, "-p", "x", "-n", "99999999999999999999"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--max-new-tokens: 99999999999999999999 is out of range"), std::string::npos) << r.err;
  r = run_kiln({"run", "--model", dir, "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(run_kiln({"run", "--help"}).exit_code, 0);
}

// An answer cut short by the end of the context says so on stderr (and one that reached
// max_new_tokens does not).
TEST(RunCommand, SaysWhenTheContextEndsTheAnswer) {
  const auto dir = (testing::test_data_dir() / "checkpoints" / "llama3_tiny").string();
  const auto full = run_kiln({"run", "--model", dir, "-p", "Hello", "-n", "100", "--ignore-eos", "--context", "32"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_NE(full.err.find("the context (32 tokens with the prompt) is full"), std::string::npos) << full.err;
  const auto fits = run_kiln({"run", "--model", dir, "-p", "Hello", "-n", "8", "--ignore-eos", "--context", "32"});
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_EQ(fits.err.find("is full"), std::string::npos) << fits.err;
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
