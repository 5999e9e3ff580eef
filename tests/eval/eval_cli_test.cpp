// End to end through the binary. Oracles: transformers' figures in tests/data/eval/goldens.json
// (perplexity within 0.5%, task completions exactly) read back from --json, and errors that
// name the flag or file at fault.
#include <gtest/gtest.h>

#include "eval_fixtures.hpp"

namespace kiln {
namespace {

using testing::run_kiln;

TEST(EvalCli, PplPrintsATableAndWritesJson) {
  const Json& g = testing::eval_goldens()["ppl"][1];  // llama2_tiny, stride not dividing the text
  testing::TempDir tmp;
  const auto json = tmp.path() / "ppl.json";
  const auto text = (testing::test_data_dir() / "heldout" / "manpages-heldout-small.txt").string();
  const auto r =
      run_kiln({"eval", "ppl", "--model", testing::checkpoint_dir(g["checkpoint"].get<std::string>()).string(),
                "--text", text, "--context", std::to_string(g["context"].get<int>()), "--stride",
                std::to_string(g["stride"].get<int>()), "--device", "REFERENCE",  // transformers' oracle
                "--json", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("perplexity"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bits per byte"), std::string::npos);
  const Json out = read_json_file(json);
  EXPECT_EQ(out["command"], "ppl");
  EXPECT_EQ(out["results"]["tokens"], g["tokens"]);
  EXPECT_LT(testing::relative_error(out["results"]["ppl"].get<double>(), g["ppl"].get<double>()), 0.005);
  EXPECT_LT(testing::relative_error(out["results"]["bits_per_byte"].get<double>(), g["bits_per_byte"].get<double>()),
            0.005);
}

TEST(EvalCli, CompareOfAModelWithItself) {
  const auto dir = testing::checkpoint_dir("llama_bias_tiny").string();
  testing::TempDir tmp;
  const auto text = tmp.path() / "t.txt";
  write_file_atomic(text, testing::heldout_small_text().substr(0, 3000));
  const auto json = tmp.path() / "c.json";
  const auto r = run_kiln({"eval", "compare", "--model", dir, "--reference", dir, "--text", text.string(), "--context",
                           "64", "--json", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("top-1 agreement"), std::string::npos) << r.out;
  const Json out = read_json_file(json);
  EXPECT_EQ(out["results"]["mean_kl"].get<double>(), 0.0);
  EXPECT_EQ(out["results"]["top1_agreement"].get<double>(), 1.0);
  EXPECT_EQ(out["results"]["stride"], 32);  // half the context by default
}

TEST(EvalCli, TaskReportsEveryItem) {
  const Json& g = testing::eval_goldens()["tasks"];
  testing::TempDir tmp;
  const auto json = tmp.path() / "task.json";
  const auto r =
      run_kiln({"eval", "task", "--model", testing::checkpoint_dir(g["checkpoint"].get<std::string>()).string(),
                "--tasks", (testing::test_data_dir() / "eval" / g["file"].get<std::string>()).string(), "--device",
                "REFERENCE", "--json", json.string()});  // exact path: transformers' oracle
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("accuracy"), std::string::npos) << r.out;
  const Json out = read_json_file(json);
  ASSERT_EQ(out["results"]["items"].size(), g["items"].size());
  for (std::size_t i = 0; i < g["items"].size(); ++i) {
    EXPECT_EQ(out["results"]["items"][i]["completion"], g["items"][i]["completion"]);
    EXPECT_EQ(out["results"]["items"][i]["right"], g["items"][i]["right"]);
  }
}

TEST(EvalCli, RepetitionReportsTheMeanRatio) {
  const Json& g = testing::eval_goldens()["repetition"];
  testing::TempDir tmp;
  const auto json = tmp.path() / "rep.json";
  const auto r = run_kiln({"eval", "repetition", "--model", testing::checkpoint_dir("llama3_tiny").string(),
                           "--prompts", (testing::test_data_dir() / "eval" / "repetition_prompts.jsonl").string(), "-n",
                           std::to_string(g["max_new_tokens"].get<int>()), "--device", "REFERENCE", "--json",
                           json.string()});  // transformers' greedy text is the oracle: exact path
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("mean repeated 4-gram ratio"), std::string::npos) << r.out;
  EXPECT_NEAR(read_json_file(json)["results"]["mean_repeated_4gram_ratio"].get<double>(), g["mean_ratio"].get<double>(),
              1e-12);
}

TEST(EvalCli, BadInputGivesClearErrors) {
  const auto dir = testing::checkpoint_dir("llama3_tiny").string();
  const auto text = (testing::test_data_dir() / "heldout" / "manpages-heldout-small.txt").string();
  auto r = run_kiln({"eval", "ppl", "--model", dir, "--text", "/nonexistent/text.txt"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/text.txt"), std::string::npos) << r.err;
  r = run_kiln({"eval", "ppl", "--model", dir, "--text", text, "--context", "64", "--stride", "65"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("stride 65"), std::string::npos) << r.err;
  r = run_kiln({"eval", "ppl", "--model", dir, "--text", text, "--context", "4096"});  // 256 positions
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--context"), std::string::npos) << r.err;
  r = run_kiln({"eval", "compare", "--model", dir, "--reference", testing::checkpoint_dir("llama2_tiny").string(),
                "--text", text});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("different tokenizers"), std::string::npos) << r.err;
  r = run_kiln({"eval", "task", "--model", dir});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--tasks"), std::string::npos) << r.err;
  // --json is opened before the model loads: nothing is evaluated or printed for nothing.
  r = run_kiln({"eval", "ppl", "--model", dir, "--text", text, "--json", "/nonexistent/ppl.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/ppl.json: cannot create"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace kiln
