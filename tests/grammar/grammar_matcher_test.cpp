// GrammarMatcher on a real tokenizer (Qwen3's, committed): the trie walk's mask equals testing
// every token one by one, stop tokens follow the grammar's end, rollback restores masks, and
// tokens split inside a UTF-8 character are matched byte by byte.
#include <gtest/gtest.h>

#include <cmath>

#include "grammar/grammar_cache.hpp"
#include "grammar/grammar_matcher.hpp"
#include "support/test_support.hpp"
#include "tokenizer/token_bytes.hpp"
#include "tokenizer/tokenizer_fixtures.hpp"

namespace kiln::grammar {
namespace {

class GrammarMatcherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const testing::TempDir scratch;
    tokenizer_ = new Tokenizer(
        Tokenizer::from_dir(testing::usable_tokenizer_dir(testing::test_data_dir() / "tokenizers" / "qwen3", scratch)));
  }
  static void TearDownTestSuite() { delete tokenizer_; }

  static std::int32_t id(std::string_view text) {
    const auto ids = tokenizer_->encode(text, false);
    EXPECT_EQ(ids.size(), 1u) << text;
    return ids.at(0);
  }
  static std::int32_t eos() { return *tokenizer_->token_to_id("<|im_end|>"); }

  static std::shared_ptr<CompiledGrammar> compile(GrammarSource::Kind kind, std::string text) {
    return compile_cached({.kind = kind, .text = std::move(text)}, *tokenizer_);
  }

  // The oracle: each token's bytes advanced from the state one at a time, no trie.
  static std::vector<bool> token_by_token(GrammarMatcher& matcher) {
    std::vector<bool> allowed(static_cast<std::size_t>(tokenizer_->vocab_size()));
    for (std::int32_t t = 0; t < tokenizer_->vocab_size(); ++t)
      allowed[static_cast<std::size_t>(t)] = matcher.allows(t);
    return allowed;
  }
  static std::vector<bool> from_mask(GrammarMatcher& matcher) {
    std::vector<std::uint32_t> words((static_cast<std::size_t>(tokenizer_->vocab_size()) + 31) / 32);
    matcher.fill_mask(words);
    std::vector<bool> allowed(static_cast<std::size_t>(tokenizer_->vocab_size()));
    for (std::size_t t = 0; t < allowed.size(); ++t) allowed[t] = ((words[t / 32] >> (t % 32)) & 1u) != 0;
    return allowed;
  }

  static inline Tokenizer* tokenizer_ = nullptr;
};

TEST_F(GrammarMatcherTest, TrieMaskEqualsTestingEveryToken) {
  GrammarMatcher matcher(compile(GrammarSource::Kind::kJsonSchema,
                                 R"({"type": "object", "properties": {"city": {"type": "string"},
                                     "n": {"type": "integer"}}, "required": ["city"]})"),
                         {eos()});
  for (const char* piece : {"{\"", "city", "\":", " \"", "Par", "is", "\",", " \"", "n", "\":", "4", "2", "}"}) {
    const auto expected = token_by_token(matcher);
    ASSERT_EQ(from_mask(matcher), expected) << "before '" << piece << "'";
    ASSERT_TRUE(matcher.accept(id(piece))) << piece;
  }
  EXPECT_TRUE(matcher.accepts_end());
  EXPECT_TRUE(matcher.must_end());  // the object is closed: nothing may follow
  EXPECT_TRUE(matcher.allows(eos()));
}

TEST_F(GrammarMatcherTest, StopTokensOnlyWhereTheGrammarMayEnd) {
  GrammarMatcher matcher(compile(GrammarSource::Kind::kRegex, "[0-9]{2,4}"), {eos()});
  EXPECT_FALSE(matcher.allows(eos()));
  ASSERT_TRUE(matcher.accept(id("1")));
  EXPECT_FALSE(matcher.allows(eos()));
  EXPECT_FALSE(matcher.accept(eos()));
  ASSERT_TRUE(matcher.accept(id("2")));
  EXPECT_TRUE(matcher.allows(eos()));
  EXPECT_FALSE(matcher.must_end());  // two more digits may come
  EXPECT_FALSE(matcher.allows(id("a")));
  ASSERT_TRUE(matcher.accept(eos()));
  EXPECT_TRUE(matcher.must_end());
  EXPECT_FALSE(matcher.allows(id("3")));
}

TEST_F(GrammarMatcherTest, RollbackRestoresTheMask) {
  GrammarMatcher matcher(compile(GrammarSource::Kind::kJsonObject, ""), {eos()});
  ASSERT_TRUE(matcher.accept(id("{\"")));
  const auto before = from_mask(matcher);
  ASSERT_TRUE(matcher.accept(id("a")));
  ASSERT_TRUE(matcher.accept(id("\":")));
  EXPECT_NE(from_mask(matcher), before);
  matcher.rollback(2);
  EXPECT_EQ(matcher.num_accepted(), 1u);
  EXPECT_EQ(from_mask(matcher), before);
}

TEST_F(GrammarMatcherTest, TokensSplittingACharacterMatchByteByByte) {
  // Qwen3 spells many CJK characters as two or more byte-level tokens.
  const std::vector<std::int32_t> ids = tokenizer_->encode("日本語", false);
  GrammarMatcher matcher(compile(GrammarSource::Kind::kRegex, "日本語|日本"), {eos()});
  for (const std::int32_t t : ids) ASSERT_TRUE(matcher.accept(t)) << t;
  EXPECT_TRUE(matcher.allows(eos()));
  GrammarMatcher other(compile(GrammarSource::Kind::kRegex, "[a-z]"), {eos()});
  EXPECT_FALSE(other.allows(ids.front()));
}

TEST_F(GrammarMatcherTest, MaskLogitsBansEverythingElse) {
  auto compiled = compile_cached({.kind = GrammarSource::Kind::kChoice, .choices = {"yes", "no"}}, *tokenizer_);
  GrammarMatcher choice(compiled, {eos()});
  std::vector<float> logits(static_cast<std::size_t>(tokenizer_->vocab_size()), 1.0f);
  choice.mask_logits(logits);
  EXPECT_EQ(logits[static_cast<std::size_t>(id("yes"))], 1.0f);
  EXPECT_EQ(logits[static_cast<std::size_t>(id("no"))], 1.0f);
  EXPECT_TRUE(std::isinf(logits[static_cast<std::size_t>(id("maybe"))]));
  EXPECT_TRUE(std::isinf(logits[static_cast<std::size_t>(eos())]));
}

TEST_F(GrammarMatcherTest, SpecialTokensAreTheirContent) {
  const auto bytes = tok::token_bytes(*tokenizer_);
  EXPECT_EQ(bytes[static_cast<std::size_t>(eos())], std::optional<std::string>("<|im_end|>"));
  EXPECT_EQ(bytes[static_cast<std::size_t>(id(" hello"))], std::optional<std::string>(" hello"));
}

}  // namespace
}  // namespace kiln::grammar
