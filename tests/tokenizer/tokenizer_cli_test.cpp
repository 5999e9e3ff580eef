// Oracle: the mistral7b fixture's golden.jsonl (HF ids and decodes of "Hello world", line
// en_hello_world) through the kiln binary, plus the exit codes and messages of bad input.
#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace kiln {
namespace {

std::string mistral_dir() { return (testing::test_data_dir() / "tokenizers" / "mistral7b").string(); }

TEST(TokenizeCli, PrintsIdsWithAndWithoutSpecialTokens) {
  auto r = testing::run_kiln({"tokenize", "--model", mistral_dir(), "Hello world"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[1, 22557, 1526]\n");
  r = testing::run_kiln({"tokenize", "--model", mistral_dir(), "--no-special", "Hello world"});
  EXPECT_EQ(r.out, "[22557, 1526]\n");
}

TEST(TokenizeCli, ReadsStdinForDash) {
  const auto r = testing::run_kiln({"tokenize", "--model", mistral_dir(), "--no-special", "-"}, "Hello world");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[22557, 1526]\n");
}

TEST(DetokenizeCli, PrintsTextAndSkipsSpecialTokensOnRequest) {
  auto r = testing::run_kiln({"detokenize", "--model", mistral_dir(), "1", "22557", "1526"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<s> Hello world\n");
  r = testing::run_kiln({"detokenize", "--model", mistral_dir(), "--skip-special", "1", "22557", "1526"});
  EXPECT_EQ(r.out, "Hello world\n");
}

TEST(DetokenizeCli, UnknownIdIsAnError) {
  const auto r = testing::run_kiln({"detokenize", "--model", mistral_dir(), "22557", "32000"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("token id 32000"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("size 32000"), std::string::npos) << r.err;
}

TEST(TokenizeCli, MissingTokenizerNamesTheFile) {
  testing::TempDir empty;
  const auto r = testing::run_kiln({"tokenize", "--model", empty.path().string(), "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tokenizer.json"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kiln
