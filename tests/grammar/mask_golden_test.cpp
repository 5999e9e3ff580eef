// Token masks against xgrammar's on real tokenizers (goldens by tools/make_grammar_goldens.py):
// each recorded walk is replayed, and at every step kiln's allowed-token mask must be xgrammar's
// bit for bit (compared by sha256 and count), stop tokens included.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <set>

#include "grammar/grammar_cache.hpp"
#include "grammar/grammar_matcher.hpp"
#include "support/test_support.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"
#include "util/file_io.hpp"
#include "util/sha256.hpp"

namespace kiln::grammar {
namespace {

std::string mask_sha256(const std::vector<std::uint32_t>& words) {
  std::vector<std::uint8_t> bytes;
  for (const std::uint32_t w : words) {
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<std::uint8_t>(w >> (8 * b)));
  }
  return sha256_hex(bytes);
}

class MaskGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MaskGoldenTest, MasksEqualXgrammarAtEveryStep) {
  const Json goldens = Json::parse(read_file(testing::test_data_dir() / "grammar" / "mask_goldens.json"));
  const auto entry = std::find_if(goldens.at("tokenizers").begin(), goldens.at("tokenizers").end(),
                                  [&](const Json& t) { return t.at("name") == GetParam(); });
  ASSERT_NE(entry, goldens.at("tokenizers").end());
  const auto fixture = testing::tokenizer_fixture(GetParam());
  if (!fixture) GTEST_SKIP() << "tokenizer fixture '" << GetParam() << "' needs KILN_EXTERNAL_FIXTURES";
  const testing::TempDir scratch;
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::usable_tokenizer_dir(*fixture, scratch));
  const auto vocab = entry->at("vocab_size").get<std::int32_t>();
  ASSERT_EQ(tokenizer.vocab_size(), vocab);
  const auto stops = entry->at("stop_token_ids").get<std::set<std::int32_t>>();

  for (const Json& c : entry->at("cases")) {
    const std::string name = c.at("name").get<std::string>() + " walk " + std::to_string(c.at("seed").get<int>());
    GrammarMatcher matcher(compile_cached(source_from_text(c.at("kind").get<std::string>(), c.at("source")), tokenizer),
                           stops);
    std::vector<std::uint32_t> words((static_cast<std::size_t>(vocab) + 31) / 32);
    std::size_t step = 0;
    for (const Json& s : c.at("steps")) {
      matcher.fill_mask(words);
      std::int64_t allowed = 0;
      for (const std::uint32_t w : words) allowed += std::popcount(w);
      ASSERT_EQ(allowed, s.at("allowed").get<std::int64_t>()) << name << ", step " << step;
      ASSERT_EQ(mask_sha256(words), s.at("mask_sha256").get<std::string>()) << name << ", step " << step;
      ASSERT_TRUE(matcher.accept(s.at("token").get<std::int32_t>())) << name << ", step " << step;
      ++step;
    }
    if (c.at("terminated").get<bool>()) {
      EXPECT_TRUE(matcher.must_end()) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, MaskGoldenTest, ::testing::Values("qwen3", "llama3"));

}  // namespace
}  // namespace kiln::grammar
