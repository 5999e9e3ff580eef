// `kiln run` with the generation flags. Oracles: transformers' beam search
// (tests/data/genai/beam_search_golden.json) and greedy continuations (golden.json); the
// speculative path prints the same greedy text; stop strings cut it; bad flag combinations are
// rejected naming the field. Tests whose oracle is transformers run on the REFERENCE device
// (exact): the CPU default's f16 KV cache flips nearly tied logits of these random checkpoints.
#include <gtest/gtest.h>

#include <algorithm>

#include "kiln/tokenizer.hpp"
#include "support/test_support.hpp"
#include "util/json.hpp"

namespace kiln {
namespace {

using testing::run_kiln;

std::string dir(const std::string& name) { return (testing::test_data_dir() / "checkpoints" / name).string(); }

Json golden(const std::string& name) {
  return read_json_file(testing::test_data_dir() / "checkpoints" / name / "golden.json")["records"];
}

TEST(RunFlags, BeamSearchPrintsTransformersHypotheses) {
  const Json record = read_json_file(testing::test_data_dir() / "genai" / "beam_search_golden.json")["records"][0];
  ASSERT_EQ(record["checkpoint"], "llama3_tiny");
  const Tokenizer tok = Tokenizer::from_dir(dir("llama3_tiny"));
  const std::string prompt = golden("llama3_tiny")[0]["prompt"].get<std::string>();
  ASSERT_EQ(tok.encode(prompt), record["prompt_ids"].get<std::vector<std::int32_t>>());
  std::vector<std::string> args{"run",
                                "-m",
                                dir("llama3_tiny"),
                                "-p",
                                prompt,
                                "-n",
                                "12",
                                "--num-beams",
                                "4",
                                "--num-return-sequences",
                                "2",
                                "--length-penalty",
                                "1.0",
                                "--early-stopping",
                                "false",
                                "--device",
                                "REFERENCE"};
  for (const Json& eos : record["eos_token_ids"]) {
    args.push_back("--eos-token-id");
    args.push_back(std::to_string(eos.get<int>()));
  }
  const auto r = run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A hypothesis that ended on an EOS token shows its text without it (kiln keeps end tokens out
  // of the text, as OpenVINO GenAI does; the golden's EOS ids are ordinary tokens, which
  // transformers' decode would print).
  const auto eos_ids = record["eos_token_ids"].get<std::vector<std::int32_t>>();
  std::string expected;
  for (std::size_t i = 0; i < 2; ++i) {
    const Json& h = record["hypotheses"][i];
    auto ids = h["generated_ids"].get<std::vector<std::int32_t>>();
    if (!ids.empty() && std::find(eos_ids.begin(), eos_ids.end(), ids.back()) != eos_ids.end()) ids.pop_back();
    expected += fmt::format("=== {} (score {:.4f}) ===\n{}\n", i + 1, h["score"].get<double>(), tok.decode(ids, true));
  }
  EXPECT_EQ(r.out, expected);
}

TEST(RunFlags, DraftModelAndPromptLookupKeepTheGreedyText) {
  const Json r0 = golden("llama3_tiny")[2];
  const std::string draft = (testing::test_data_dir() / "genai" / "llama3_tiny_draft").string();
  const std::vector<std::string> base{"run",      "-m",       dir("llama3_tiny"), "-p", r0["prompt"].get<std::string>(),
                                      "-n",       "32",       "--temperature",    "0",  "--ignore-eos",
                                      "--device", "REFERENCE"};
  auto args = base;
  args.insert(args.end(), {"--draft", draft, "--num-assistant-tokens", "4", "--no-adaptive-draft"});
  auto r = run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, r0["greedy_text"].get<std::string>() + "\n");
  EXPECT_NE(r.err.find("draft acceptance"), std::string::npos) << r.err;
  args = base;
  args.insert(args.end(), {"--max-ngram-size", "3", "--num-assistant-tokens", "3"});
  r = run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, r0["greedy_text"].get<std::string>() + "\n");
}

TEST(RunFlags, StopStringsAndLogprobs) {
  const Json r0 = golden("llama2_tiny")[1];
  const std::string text = r0["greedy_text"].get<std::string>();
  const std::string stop = text.substr(text.size() / 2, 3);
  const auto r =
      run_kiln({"run", "-m", dir("llama2_tiny"), "-p", r0["prompt"].get<std::string>(), "-n", "32", "--temperature",
                "0", "--ignore-eos", "--stop", stop, "--logprobs", "2", "--device", "REFERENCE"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, text.substr(0, text.find(stop)) + "\n");
  EXPECT_NE(r.err.find(" | "), std::string::npos) << r.err;  // alternatives listed per token
}

TEST(RunFlags, BadCombinationsNameTheField) {
  auto r = run_kiln({"run", "-m", dir("llama3_tiny"), "-p", "x", "--num-beams", "2", "--do-sample"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("num_beams"), std::string::npos) << r.err;
  r = run_kiln({"run", "-m", dir("llama3_tiny"), "-p", "x", "--draft", dir("llama2_tiny")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tokenizer differs"), std::string::npos) << r.err;
  r = run_kiln({"run", "-m", dir("llama3_tiny"), "-p", "x", "--num-assistant-tokens", "3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("draft model"), std::string::npos) << r.err;
  r = run_kiln({"run", "-m", dir("llama3_tiny"), "-p", "x", "--early-stopping", "soon"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("early-stopping"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kiln
